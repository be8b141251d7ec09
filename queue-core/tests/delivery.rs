//! `Delivery`: exactly one ending, abandonment on drop, retry.

use tally_queue::{Outcome, Queue};

#[test]
fn each_outcome_is_counted_once() {
    let queue = Queue::unbounded();
    for n in 0..4 {
        queue.try_put(n).unwrap();
    }
    assert_eq!(queue.try_get().unwrap().resolve(Outcome::Succeeded), 0);
    assert_eq!(queue.try_get().unwrap().resolve(Outcome::Rejected), 1);
    assert_eq!(queue.try_get().unwrap().resolve(Outcome::Uncertain), 2);
    drop(queue.try_get().unwrap());
    let ledger = queue.ledger();
    assert_eq!(
        (
            ledger.succeeded,
            ledger.rejected,
            ledger.uncertain,
            ledger.abandoned
        ),
        (1, 1, 1, 1)
    );
    assert!(ledger.is_balanced());
}

#[test]
fn early_return_is_abandoned() {
    fn handler(queue: &Queue<i32>) -> Result<(), &'static str> {
        let delivery = queue.try_get().map_err(|_| "empty")?;
        if *delivery < 0 {
            return Err("negative"); // the delivery drops here
        }
        delivery.succeed();
        Ok(())
    }
    let queue = Queue::unbounded();
    queue.try_put(-1).unwrap();
    assert_eq!(handler(&queue), Err("negative"));
    assert_eq!(queue.ledger().abandoned, 1);
    assert_eq!(queue.ledger().succeeded, 0);
}

#[test]
fn deref_mut_changes_the_item() {
    let queue = Queue::unbounded();
    queue.try_put(vec![1]).unwrap();
    let mut delivery = queue.try_get().unwrap();
    delivery.push(2);
    assert_eq!(delivery.succeed(), vec![1, 2]);
}

#[test]
fn retry_keeps_the_id() {
    let queue = Queue::unbounded();
    let id = queue.try_put("x").unwrap();
    let delivery = queue.try_get().unwrap();
    assert_eq!(delivery.retry().unwrap(), id);
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.buffered, ledger.in_flight, ledger.accepted),
        (1, 0, 1)
    );
    let again = queue.try_get().unwrap();
    assert_eq!(again.id(), id);
    again.succeed();
    assert_eq!(queue.ledger().succeeded, 1);
}

/// A retried item was counted when it was first taken: it takes no slot of a full
/// bounded queue. After a shutdown, a retry comes back in flight.
#[test]
fn retry_takes_no_slot_and_comes_back_in_flight_after_shutdown() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    let held = queue.try_get().unwrap();
    queue.try_put(2).unwrap(); // the buffer is full again
    held.retry().unwrap();
    assert_eq!(queue.len(), 2);
    assert!(queue.try_put(3).unwrap_err().is_full());
    let held = queue.try_get().unwrap();
    assert_eq!((*held, held.attempt()), (1, 2));
    queue.shutdown();
    let held = held.retry().unwrap_err();
    assert_eq!(queue.ledger().in_flight, 1);
    assert_eq!(*held, 1);
    held.reject();
    assert!(queue.ledger().is_balanced());
}

#[test]
fn owned_delivery_abandoned_on_drop() {
    let queue = std::sync::Arc::new(Queue::unbounded());
    queue.try_put(1).unwrap();
    let delivery = queue.try_get_owned().unwrap();
    std::thread::spawn(move || drop(delivery)).join().unwrap();
    assert_eq!(queue.ledger().abandoned, 1);
    assert_eq!(queue.unfinished(), 0);
}

/// A retried item comes back under its old id, as its next attempt, ahead of the fresh
/// backlog (the next get that finds it waiting serves it).
#[test]
fn retry_comes_back_first_under_its_old_id() {
    let queue = Queue::unbounded();
    let ids: Vec<_> = (0..3).map(|n| queue.try_put(n).unwrap()).collect();
    assert_eq!(queue.try_get().unwrap().retry().unwrap(), ids[0]);
    let order: Vec<_> = std::iter::from_fn(|| queue.try_get().ok())
        .map(|delivery| (delivery.id(), delivery.attempt(), delivery.succeed()))
        .collect();
    assert_eq!(order, [(ids[0], 2, 0), (ids[1], 1, 1), (ids[2], 1, 2)]);
}
