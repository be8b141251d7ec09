//! Cancellation at every await point: one consumer-and-producer future ("the victim") is
//! cancelled after `k` polls, for every `k` from 0 until it completes uncancelled, while a
//! deterministic helper works the same queue between the victim's polls. After each `k`,
//! every accepted id must have ended exactly once (a delivery the victim held when it was
//! cancelled counts as abandoned), no cancelled put was accepted, every refused item came
//! back, and the ledger agrees with the test's own tally.

mod reliability;

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use futures_lite::future::{block_on, yield_now};
use reliability::ends::{End, Ends};
use reliability::{after_polls, cancel_after};
use tally_queue::{Delivery, GetTimeoutError, JobId, Ledger, Outcome, Queue};

/// What the victim and the helper did, kept outside the victim so that it survives the
/// victim's cancellation.
#[derive(Default)]
struct Log {
    accepted: Vec<(JobId, u32)>,
    /// Items whose put was refused and came back.
    returned: Vec<u32>,
    /// The delivery the victim holds right now, if any.
    holding: Option<(JobId, u32)>,
    ended: Vec<(JobId, u32, End)>,
    joined: Option<Ledger>,
}

/// Puts two items (the first waits for room, the second has a deadline), takes one and
/// holds it across two await points, takes another with a deadline, then joins.
async fn victim(queue: &Queue<u32>, log: &RefCell<Log>) {
    let id = queue.put(1).await.expect("the queue stays open");
    log.borrow_mut().accepted.push((id, 1));

    match queue.put_until(2, after_polls(3)).await {
        Ok(id) => log.borrow_mut().accepted.push((id, 2)),
        Err(refused) => {
            assert!(refused.is_timed_out(), "{refused}");
            log.borrow_mut().returned.push(refused.into_inner());
        }
    }

    let held = queue.get().await.expect("the queue stays open");
    log.borrow_mut().holding = Some((held.id(), *held));
    // Not settled while this delivery is held: the join must time out.
    let early = queue.join_until(after_polls(2)).await;
    assert!(early.is_err(), "join returned while a delivery was held");
    yield_now().await;
    let (id, item) = (held.id(), held.succeed());
    {
        let mut log = log.borrow_mut();
        log.holding = None;
        log.ended.push((id, item, End::Succeeded));
    }

    match queue.get_until(after_polls(2)).await {
        Ok(delivery) => {
            let id = delivery.id();
            let item = delivery.reject();
            log.borrow_mut().ended.push((id, item, End::Rejected));
        }
        Err(error) => assert_eq!(error, GetTimeoutError::TimedOut),
    }

    let ledger = queue.join().await;
    log.borrow_mut().joined = Some(ledger);
}

/// The helper: between two polls of the victim it does one step of a fixed rotation.
struct Helper<'a> {
    queue: &'a Queue<u32>,
    held: Vec<Delivery<'a, u32>>,
    puts_left: u32,
    next_item: u32,
    step: u32,
}

impl<'a> Helper<'a> {
    fn put(&mut self, log: &RefCell<Log>) {
        if self.puts_left == 0 {
            return;
        }
        let item = self.next_item;
        match self.queue.try_put(item) {
            Ok(id) => {
                log.borrow_mut().accepted.push((id, item));
                self.puts_left -= 1;
                self.next_item += 1;
            }
            Err(refused) => {
                assert!(refused.is_full(), "{refused}");
                assert_eq!(
                    refused.into_inner(),
                    item,
                    "a refused item came back changed"
                );
            }
        }
    }

    fn step(&mut self, log: &RefCell<Log>) {
        self.step += 1;
        match self.step % 4 {
            0 => self.put(log),
            1 => {
                if let Ok(delivery) = self.queue.try_get() {
                    self.held.push(delivery);
                }
            }
            2 => self.resolve_one(log),
            _ => {}
        }
    }

    fn resolve_one(&mut self, log: &RefCell<Log>) {
        if self.held.is_empty() {
            return;
        }
        let delivery = self.held.remove(0);
        let id = delivery.id();
        let (item, end) = match id.get() % 3 {
            0 => (delivery.resolve(Outcome::Uncertain), End::Uncertain),
            1 => (delivery.reject(), End::Rejected),
            _ => (delivery.succeed(), End::Succeeded),
        };
        log.borrow_mut().ended.push((id, item, end));
    }
}

/// Runs the victim cancelled after `k` polls; returns whether it completed uncancelled.
fn run(make: fn() -> Queue<u32>, k: u32) -> bool {
    let queue = make();
    let log = RefCell::new(Log::default());
    let mut helper = Helper {
        queue: &queue,
        held: Vec::new(),
        puts_left: 4,
        next_item: 100,
        step: 0,
    };
    // Fill the queue first, so the victim's first put waits for room.
    helper.put(&log);

    let mut cx = Context::from_waker(Waker::noop());
    let completed = {
        let mut victim = pin!(cancel_after(victim(&queue, &log), k));
        let mut steps = 0;
        loop {
            // Polled after every helper step, woken or not: a spurious poll must be harmless.
            if let Poll::Ready(done) = victim.as_mut().poll(&mut cx) {
                break done.is_some();
            }
            helper.step(&log);
            steps += 1;
            assert!(steps < 10_000, "k = {k}: the victim never finished");
        }
    };

    // The victim is gone. A delivery it held was dropped with it: abandoned.
    let held_at_cancel = log.borrow_mut().holding.take();
    if let Some((id, item)) = held_at_cancel {
        assert!(!completed);
        log.borrow_mut().ended.push((id, item, End::Abandoned));
    }
    while !helper.held.is_empty() {
        helper.resolve_one(&log);
    }
    let drained = queue.shutdown_now();
    let mut log = log.into_inner();
    log.ended.extend(
        drained
            .into_iter()
            .map(|(id, item)| (id, item, End::Discarded)),
    );
    let ledger = block_on(queue.join_until(async {})).unwrap_or_else(|timed_out| {
        panic!(
            "k = {k}: unfinished after the drain: {}",
            timed_out.ledger()
        )
    });

    // Accounting by id.
    let mut accepted = HashMap::new();
    for &(id, item) in &log.accepted {
        assert!(
            accepted.insert(id, item).is_none(),
            "k = {k}: {id} issued twice"
        );
    }
    let items: Vec<u32> = accepted.values().copied().collect();
    for item in &log.returned {
        assert!(
            !items.contains(item),
            "k = {k}: item {item} both refused and accepted"
        );
    }
    let mut tally = Ends::default();
    let mut ended = HashMap::new();
    for &(id, item, end) in &log.ended {
        assert_eq!(
            accepted.get(&id),
            Some(&item),
            "k = {k}: {id} ended with the wrong item"
        );
        assert!(ended.insert(id, end).is_none(), "k = {k}: {id} ended twice");
        tally.record(end);
    }
    assert_eq!(
        ended.len(),
        accepted.len(),
        "k = {k}: an accepted id never ended"
    );
    let expected = tally.settled_ledger(accepted.len() as u64);
    assert_eq!(ledger, expected, "k = {k}");
    if completed {
        let joined = log.joined.expect("a completed victim joined");
        assert_eq!(
            joined.unfinished(),
            0,
            "k = {k}: join returned early: {joined}"
        );
    }
    completed
}

/// Cancels the victim after every possible number of polls; returns how many polls it
/// needed to complete.
fn every_cancellation_point(make: fn() -> Queue<u32>) -> u32 {
    for k in 0..1_000 {
        if run(make, k) {
            // Once it completed within k polls it completes for every larger k too.
            assert!(run(make, k + 1));
            eprintln!("the victim completed after {k} polls; cancelled at each of them");
            return k;
        }
    }
    panic!("the victim never completed");
}

#[test]
fn cancelled_at_every_await_point_bounded() {
    let polls = every_cancellation_point(|| Queue::bounded(1).unwrap());
    // It waited at several points: the run covered more than the trivial k = 0 and 1.
    assert!(polls >= 6, "only {polls} polls");
}

#[test]
fn cancelled_at_every_await_point_unfinished_limit() {
    let polls = every_cancellation_point(|| Queue::with_unfinished_limit(2).unwrap());
    assert!(polls >= 6, "only {polls} polls");
}

#[test]
fn cancelled_at_every_await_point_unbounded() {
    let polls = every_cancellation_point(Queue::unbounded);
    assert!(polls >= 4, "only {polls} polls");
}
