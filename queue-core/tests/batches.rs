//! The batch verbs: `put_many` and `get_many` in every form. What a batch accepts, refuses
//! and hands back, the wake-ups it sends (as many as items, in one pass after the batch),
//! the turn rule and the lane's fairness within a batch, futures dropped at every poll,
//! and the journal and ledger kept exact.

mod common;

use core::task::Poll;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{
    counting_waker, every_kind, expect_ready, poll_once, poll_with, scaled, waker_fn, within, Log,
    Task,
};
use futures_lite::future::block_on;
use tally_queue::{
    AbandonPolicy, GetError, JobEvent, JobId, Outcome, PutError, Queue, TryGetError, TryPutError,
};

fn numbers(ids: &[JobId]) -> Vec<u64> {
    ids.iter().map(|id| id.get()).collect()
}

#[test]
fn a_batch_is_accepted_whole_in_order_on_every_kind() {
    for (kind, queue) in every_kind::<u32>(AbandonPolicy::Abandon) {
        let mut ids = Vec::new();
        assert_eq!(queue.try_put_many(&mut (0..4), &mut ids), Ok(4), "{kind}");
        assert_eq!(numbers(&ids), [0, 1, 2, 3], "{kind}");
        let mut batch = Vec::new();
        assert_eq!(queue.try_get_many(&mut batch, 10), Ok(4), "{kind}");
        let seen: Vec<_> = batch
            .iter()
            .map(|job| (job.id(), **job, job.attempt()))
            .collect();
        let expected: Vec<_> = ids.iter().zip(0..).map(|(&id, n)| (id, n, 1)).collect();
        assert_eq!(seen, expected, "{kind}");
        for (n, job) in batch.drain(..).enumerate() {
            match n {
                0 => {
                    job.reject();
                }
                1 => {
                    job.resolve(Outcome::Uncertain);
                }
                2 => drop(job),
                _ => {
                    job.succeed();
                }
            }
        }
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.accepted, ledger.succeeded, ledger.rejected),
            (4, 1, 1),
            "{kind}"
        );
        assert_eq!((ledger.uncertain, ledger.abandoned), (1, 1), "{kind}");
        assert!(ledger.is_balanced() && queue.is_settled(), "{kind}");
    }
}

#[test]
fn ids_are_appended_and_counted_per_call() {
    let queue = Queue::unbounded();
    let mut ids = vec![];
    assert_eq!(queue.try_put_many(&mut (0..2), &mut ids), Ok(2));
    assert_eq!(queue.try_put_many(&mut (2..5), &mut ids), Ok(3));
    assert_eq!(queue.try_put_many(&mut (5..5), &mut ids), Ok(0));
    assert_eq!(numbers(&ids), [0, 1, 2, 3, 4]);
    let mut batch = Vec::new();
    assert_eq!(queue.try_get_many(&mut batch, 0), Ok(0));
    assert_eq!(block_on(queue.get_many(&mut batch, 0)), Ok(0));
    assert!(batch.is_empty());
    assert_eq!(queue.try_get_many(&mut batch, 2), Ok(2));
    assert_eq!(queue.try_get_many(&mut batch, 2), Ok(2));
    assert_eq!(batch.len(), 4, "extended, never cleared");
    batch.drain(..).for_each(|job| {
        job.succeed();
    });
    assert_eq!(queue.ledger().buffered, 1);
}

#[test]
fn a_full_queue_refuses_mid_batch_and_leaves_the_rest_in_the_iterator() {
    for (kind, queue) in [
        ("bounded(3)", Queue::bounded(3).unwrap()),
        ("unfinished(3)", Queue::with_unfinished_limit(3).unwrap()),
        ("bounded(70_000)", Queue::bounded(70_000).unwrap()),
    ] {
        let fill = if kind == "bounded(70_000)" { 69_997 } else { 0 };
        queue
            .try_put_many(&mut (0..fill).map(|n| n.to_string()), &mut Vec::new())
            .unwrap();
        let mut items = (100..106).map(|n| n.to_string());
        let mut ids = Vec::new();
        let refused = queue.try_put_many(&mut items, &mut ids);
        assert!(
            matches!(refused, Err(TryPutError::Full(ref s)) if s == "103"),
            "{kind}"
        );
        assert_eq!(ids.len(), 3, "{kind}");
        assert_eq!(items.collect::<Vec<_>>(), ["104", "105"], "{kind}");
        let ledger = queue.ledger();
        assert_eq!(ledger.accepted as usize, fill + 3, "{kind}");
        assert_eq!(ledger.buffered as usize, fill + 3, "{kind}");
    }
}

#[test]
fn a_shutdown_mid_batch_refuses_the_items_after_it() {
    for (kind, queue) in every_kind::<u32>(AbandonPolicy::Abandon) {
        let queue = Arc::new(queue);
        let q = queue.clone();
        // The iterator shuts the queue down as it hands out item 2.
        let mut items = (0..5).inspect(move |&n| {
            if n == 2 {
                q.shutdown();
            }
        });
        let mut ids = Vec::new();
        let refused = queue.try_put_many(&mut items, &mut ids);
        assert!(matches!(refused, Err(TryPutError::ShutDown(2))), "{kind}");
        assert_eq!(numbers(&ids), [0, 1], "{kind}");
        assert_eq!(items.collect::<Vec<_>>(), [3, 4], "{kind}");
        let mut batch = Vec::new();
        assert_eq!(
            queue.try_get_many(&mut batch, 5),
            Ok(2),
            "{kind}: drained after"
        );
        batch.drain(..).for_each(|job| {
            job.succeed();
        });
        assert_eq!(
            queue.try_get_many(&mut batch, 5),
            Err(TryGetError::ShutDown)
        );
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.succeeded), (2, 2), "{kind}");
    }
}

#[test]
fn an_immediate_shutdown_mid_batch_hands_back_what_was_accepted() {
    let queue = Arc::new(Queue::bounded(8).unwrap());
    let q = queue.clone();
    let drained = Arc::new(Mutex::new(Vec::new()));
    let d = drained.clone();
    let mut items = (0..5).inspect(move |&n| {
        if n == 3 {
            d.lock().unwrap().extend(q.shutdown_now());
        }
    });
    let mut ids = Vec::new();
    let refused = queue.try_put_many(&mut items, &mut ids);
    assert!(matches!(refused, Err(TryPutError::ShutDown(3))));
    let drained = drained.lock().unwrap();
    let back: Vec<_> = drained.iter().map(|(id, n)| (id.get(), *n)).collect();
    assert_eq!(back, [(0, 0), (1, 1), (2, 2)]);
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.discarded), (3, 3));
    assert!(ledger.is_balanced() && queue.is_settled());
}

#[test]
fn no_workers_refuses_the_batch_and_each_form_says_so() {
    let queue = Queue::bounded(2).unwrap();
    drop(queue.worker());
    let mut items = 0..3;
    let mut ids = Vec::new();
    assert!(matches!(
        queue.try_put_many(&mut items, &mut ids),
        Err(TryPutError::NoWorkers(0))
    ));
    assert!(matches!(
        queue.put_many_blocking(&mut items, &mut ids),
        Err(PutError::NoWorkers(1))
    ));
    assert!(matches!(
        block_on(queue.put_many(&mut items, &mut ids)),
        Err(PutError::NoWorkers(2))
    ));
    assert!(ids.is_empty());
    assert_eq!(queue.ledger().accepted, 0);
}

/// A batch wakes as many waiting getters as it put items, and only after the last item
/// is in: every woken waker sees the whole batch buffered.
#[test]
fn a_batch_wakes_one_getter_per_item_after_the_whole_batch() {
    for (kind, queue) in every_kind::<u32>(AbandonPolicy::Abandon) {
        let queue = Arc::new(queue);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut gets: Vec<_> = (0..5).map(|_| queue.get()).collect();
        let wakers: Vec<_> = (0..5)
            .map(|_| {
                let (queue, seen) = (queue.clone(), seen.clone());
                waker_fn(move || seen.lock().unwrap().push(queue.len()))
            })
            .collect();
        for (get, waker) in gets.iter_mut().zip(&wakers) {
            assert!(poll_with(get, waker).is_pending(), "{kind}");
        }
        assert_eq!(
            queue.try_put_many(&mut (0..3), &mut Vec::new()),
            Ok(3),
            "{kind}"
        );
        assert_eq!(
            *seen.lock().unwrap(),
            [3, 3, 3],
            "{kind}: one wake-up per item, after all"
        );
        let mut got = 0;
        for (get, waker) in gets.iter_mut().zip(&wakers) {
            if let Poll::Ready(job) = poll_with(get, waker) {
                job.unwrap().succeed();
                got += 1;
            }
        }
        assert_eq!(got, 3, "{kind}");
        drop(gets);
        assert_eq!(queue.ledger().succeeded, 3, "{kind}");
    }
}

/// The turn rule inside a batch: a `try_get_many` takes nothing kept for a woken `get`,
/// and a woken `get_many` takes its own item first.
#[test]
fn a_batch_takes_no_item_kept_for_a_woken_get() {
    for (kind, queue) in every_kind::<u32>(AbandonPolicy::Abandon) {
        let mut woken = Task::new(queue.get());
        assert!(woken.run().is_none(), "{kind}");
        queue.try_put(0).unwrap();
        assert_eq!(woken.wake_ups(), 1, "{kind}");
        let mut batch = Vec::new();
        assert_eq!(
            queue.try_get_many(&mut batch, 8),
            Err(TryGetError::Empty),
            "{kind}: the only item is the woken get's"
        );
        queue.try_put_many(&mut (1..4), &mut Vec::new()).unwrap();
        assert_eq!(
            queue.try_get_many(&mut batch, 8),
            Ok(3),
            "{kind}: one left for the get"
        );
        assert_eq!(
            batch.iter().map(|job| **job).collect::<Vec<_>>(),
            [0, 1, 2],
            "{kind}"
        );
        woken.run().expect("woken").unwrap().succeed();
        batch.drain(..).for_each(|job| {
            job.succeed();
        });
        assert_eq!(queue.ledger().buffered, 0, "{kind}");

        // A woken `get_many` holds a turn: its own item, then what is not kept.
        let mut gotten = Vec::new();
        let mut many = Task::new(queue.get_many(&mut gotten, 8));
        let mut other = Task::new(queue.get());
        assert!(many.run().is_none() && other.run().is_none(), "{kind}");
        queue.try_put_many(&mut (4..7), &mut Vec::new()).unwrap();
        assert_eq!(many.run(), Some(Ok(2)), "{kind}: its item and one not kept");
        other.run().expect("woken").unwrap().succeed();
        drop(many);
        gotten.drain(..).for_each(|job| {
            job.succeed();
        });
        assert!(queue.is_settled(), "{kind}");
    }
}

/// Returned items and fresh ones alternate within a batch, as they do across single gets,
/// and each returned item comes with its attempt.
#[test]
fn a_batch_serves_the_lane_every_other_item() {
    let policy = AbandonPolicy::Redeliver {
        max_attempts: core::num::NonZeroU32::new(3).unwrap(),
    };
    for (kind, queue) in every_kind::<u32>(policy) {
        queue.try_put_many(&mut (0..4), &mut Vec::new()).unwrap();
        let mut batch = Vec::new();
        queue.try_get_many(&mut batch, 2).unwrap();
        batch.clear(); // dropped: both come back, as attempt 2
        assert_eq!(queue.ledger().buffered, 4, "{kind}");
        queue.try_get_many(&mut batch, 10).unwrap();
        let seen: Vec<_> = batch.iter().map(|job| (**job, job.attempt())).collect();
        assert_eq!(seen.len(), 4, "{kind}");
        let returned: Vec<_> = seen.iter().filter(|(_, a)| *a == 2).map(|s| s.0).collect();
        assert_eq!(returned, [0, 1], "{kind}: {seen:?}");
        let positions: Vec<_> = (0..4).filter(|&i| seen[i].1 == 2).collect();
        assert!(
            positions[1] - positions[0] == 2 && positions[0] <= 1,
            "{kind}: lane every other take: {seen:?}"
        );
        batch.drain(..).for_each(|job| {
            job.succeed();
        });
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.succeeded), (4, 4), "{kind}");
        assert_eq!(queue.redeliveries(), 2, "{kind}");
    }
}

/// Dropped after `k` polls, a `get_many` took items only in the poll that returned them.
#[test]
fn get_many_dropped_at_every_poll_takes_nothing() {
    for k in 0..5 {
        for (kind, queue) in every_kind::<u32>(AbandonPolicy::Abandon) {
            let mut batch = Vec::new();
            let mut got = None;
            {
                let mut get = queue.get_many(&mut batch, 2);
                for i in 0..k {
                    match poll_once(&mut get) {
                        Poll::Ready(n) => {
                            got = Some(n);
                            break;
                        }
                        Poll::Pending => {}
                    }
                    if i == 1 {
                        queue.try_put_many(&mut (0..3), &mut Vec::new()).unwrap();
                    }
                }
            }
            let taken = batch.len();
            assert_eq!(got.map(Result::unwrap).unwrap_or(0), taken, "{kind} k={k}");
            batch.drain(..).for_each(|job| {
                job.succeed();
            });
            let ledger = queue.ledger();
            assert_eq!(ledger.in_flight, 0, "{kind} k={k}");
            assert_eq!(ledger.succeeded as usize, taken, "{kind} k={k}");
            assert_eq!(ledger.buffered as usize + taken, ledger.accepted as usize);
            // A wake-up handed to the dropped batch passed on: a new get is served.
            if ledger.buffered != 0 {
                let mut next = queue.get();
                expect_ready(&mut next).unwrap().succeed();
            }
        }
    }
}

/// Dropped after `k` polls, a `put_many` accepted exactly the ids it pushed; the item it
/// was waiting to place is dropped with it, and the rest are still in the iterator.
#[test]
fn put_many_dropped_at_every_poll_keeps_the_count() {
    for k in 0..7 {
        for (kind, queue) in [
            ("bounded(2)", Queue::bounded(2).unwrap()),
            ("unfinished(2)", Queue::with_unfinished_limit(2).unwrap()),
        ] {
            let read = Arc::new(AtomicUsize::new(0));
            let r = read.clone();
            let mut items = (0..6).inspect(move |_| {
                r.fetch_add(1, Ordering::SeqCst);
            });
            let mut ids = Vec::new();
            let mut result = None;
            let mut polls = 0;
            {
                let mut put = queue.put_many(&mut items, &mut ids);
                for i in 0..k {
                    polls += 1;
                    if let Poll::Ready(r) = poll_once(&mut put) {
                        result = Some(r.map_err(PutError::into_inner));
                        break;
                    }
                    if i == 1 || i == 2 {
                        queue.try_get().unwrap().succeed();
                    }
                    if i == 4 {
                        queue.shutdown();
                    }
                }
            }
            let read = read.load(Ordering::SeqCst);
            let ledger = queue.ledger();
            assert_eq!(ledger.accepted as usize, ids.len(), "{kind} k={k}");
            assert_eq!(numbers(&ids), (0..ids.len() as u64).collect::<Vec<_>>());
            // Every item read is accepted, or refused in the error, or was the one the
            // dropped future waited to place.
            let held = match result {
                Some(Ok(n)) => {
                    assert_eq!(n, ids.len());
                    0
                }
                Some(Err(refused)) => {
                    assert_eq!(refused as usize, ids.len(), "{kind} k={k}: the next item");
                    1
                }
                None => usize::from(polls > 0),
            };
            assert_eq!(read, ids.len() + held, "{kind} k={k}: {result:?}");
            assert_eq!(items.count(), 6 - read, "{kind} k={k}: the rest unread");
            if k >= 6 {
                assert_eq!(result, Some(Err(4)), "{kind} k={k}");
            }
        }
    }
}

#[test]
fn put_many_waits_for_room_and_wakes_in_order() {
    let queue = Queue::bounded(2).unwrap();
    let mut ids = Vec::new();
    let mut items = 0..5;
    let mut put = Task::new(queue.put_many(&mut items, &mut ids));
    assert!(put.run().is_none(), "two placed, waits for room");
    assert_eq!(queue.len(), 2);
    let mut batch = Vec::new();
    assert_eq!(queue.try_get_many(&mut batch, 2), Ok(2));
    assert!(put.run().is_none(), "two more placed");
    assert_eq!(queue.len(), 2);
    queue.try_get_many(&mut batch, 2).unwrap();
    assert_eq!(put.run(), Some(Ok(5)));
    drop(put);
    assert_eq!(numbers(&ids), [0, 1, 2, 3, 4]);
    assert_eq!(items.next(), None);
    queue.try_get_many(&mut batch, 2).unwrap();
    let order: Vec<_> = batch.drain(..).map(|job| job.succeed()).collect();
    assert_eq!(order, [0, 1, 2, 3, 4]);
}

#[test]
fn a_waiting_batch_is_woken_by_shutdown() {
    let queue = Queue::bounded(1).unwrap();
    let mut items = 0..3;
    let mut ids = Vec::new();
    let mut put = Task::new(queue.put_many(&mut items, &mut ids));
    let get_queue = Queue::<u8>::unbounded();
    let mut batch = Vec::new();
    let mut get = Task::new(get_queue.get_many(&mut batch, 4));
    assert!(put.run().is_none() && get.run().is_none());
    queue.shutdown();
    get_queue.shutdown();
    assert_eq!(put.run(), Some(Err(PutError::ShutDown(1))));
    assert_eq!(get.run(), Some(Err(GetError::ShutDown)));
    drop((put, get));
    assert_eq!(items.next(), Some(2));
    assert_eq!(ids.len(), 1);
}

#[test]
fn the_journal_hears_each_item_of_a_batch_in_order() {
    let log = Arc::new(Log::default());
    let queue = Queue::bounded(8).unwrap().with_journal(log.clone());
    let mut ids = Vec::new();
    queue.try_put_many(&mut (0..3), &mut ids).unwrap();
    let mut batch = Vec::new();
    queue.try_get_many(&mut batch, 8).unwrap();
    for job in batch.drain(..) {
        job.succeed();
    }
    for &id in &ids {
        assert_eq!(
            log.of(id),
            [
                JobEvent::Accepted(id),
                JobEvent::Delivered { id, attempt: 1 },
                JobEvent::Ended {
                    id,
                    outcome: Outcome::Succeeded
                }
            ]
        );
    }
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.succeeded), (3, 3));
}

#[test]
fn owned_batches_move_into_threads() {
    let queue = Arc::new(Queue::unbounded());
    queue
        .try_put_many(&mut (0..10u64), &mut Vec::new())
        .unwrap();
    let mut batch = Vec::new();
    assert_eq!(queue.try_get_many_owned(&mut batch, 4), Ok(4));
    let sum = std::thread::spawn(move || batch.into_iter().map(|job| job.succeed()).sum::<u64>())
        .join()
        .unwrap();
    assert_eq!(sum, 6);
    assert_eq!(queue.ledger().succeeded, 4);
}

/// Batch producers and batch consumers on every kind: every item delivered once, the
/// ledger exact, within a time limit.
#[test]
fn batch_producers_and_consumers_deliver_every_item_once() {
    let per = scaled(5_000, 60);
    for (kind, queue) in every_kind::<usize>(AbandonPolicy::Abandon) {
        let queue = Arc::new(queue);
        let q = queue.clone();
        let seen = within(60, move || {
            std::thread::scope(|s| {
                let consumers: Vec<_> = (0..2)
                    .map(|_| {
                        let queue = &q;
                        s.spawn(move || {
                            let _worker = queue.worker();
                            let mut seen = Vec::new();
                            let mut batch = Vec::new();
                            while queue.get_many_blocking(&mut batch, 7).is_ok() {
                                seen.extend(batch.drain(..).map(|job| job.succeed()));
                            }
                            seen
                        })
                    })
                    .collect();
                let producers: Vec<_> = (0..2)
                    .map(|p| {
                        let queue = &q;
                        s.spawn(move || {
                            let mut ids = Vec::new();
                            let mut items = (p * per..(p + 1) * per).peekable();
                            while items.peek().is_some() {
                                let mut chunk =
                                    items.by_ref().take(5).collect::<Vec<_>>().into_iter();
                                if p == 0 {
                                    queue.put_many_blocking(&mut chunk, &mut ids).unwrap();
                                } else {
                                    block_on(queue.put_many(&mut chunk, &mut ids)).unwrap();
                                }
                            }
                            ids.len()
                        })
                    })
                    .collect();
                let accepted: usize = producers.into_iter().map(|p| p.join().unwrap()).sum();
                assert_eq!(accepted, 2 * per);
                q.shutdown();
                let mut seen: Vec<usize> = consumers
                    .into_iter()
                    .flat_map(|c| c.join().unwrap())
                    .collect();
                seen.sort_unstable();
                seen
            })
        });
        assert_eq!(seen, (0..2 * per).collect::<Vec<_>>(), "{kind}");
        let ledger = queue.ledger();
        assert_eq!(ledger.succeeded as usize, 2 * per, "{kind}");
        assert!(ledger.is_balanced() && queue.is_settled(), "{kind}");
    }
}

#[test]
fn a_waiting_get_many_is_served_by_a_put() {
    let queue = Queue::unbounded();
    let mut batch = Vec::new();
    let mut get = queue.get_many(&mut batch, 3);
    let (waker, woken) = counting_waker();
    assert!(poll_with(&mut get, &waker).is_pending());
    queue.try_put_many(&mut (0..5), &mut Vec::new()).unwrap();
    assert!(woken.load(Ordering::SeqCst) >= 1);
    assert_eq!(expect_ready(&mut get), Ok(3));
    drop(get);
    batch.drain(..).for_each(|job| {
        job.succeed();
    });
    assert_eq!(queue.ledger().buffered, 2);
}
