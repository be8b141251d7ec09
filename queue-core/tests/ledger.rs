//! The ledger: identity, display, and a property test of random operation sequences
//! against a model that tracks every id.

use std::collections::BTreeMap;

use proptest::prelude::*;
use tally_queue::{Delivery, JobId, Ledger, Outcome, Queue, TryPutError};

#[test]
fn display_lists_every_field() {
    let ledger = {
        let mut ledger = Ledger::default();
        ledger.accepted = 8;
        ledger.buffered = 1;
        ledger.in_flight = 1;
        ledger.succeeded = 1;
        ledger.rejected = 1;
        ledger.uncertain = 1;
        ledger.abandoned = 1;
        ledger.discarded = 2;
        ledger
    };
    assert!(ledger.is_balanced());
    assert_eq!(ledger.unfinished(), 2);
    assert_eq!(
        ledger.to_string(),
        "accepted 8: 1 buffered, 1 in flight, 1 succeeded, 1 rejected, 1 uncertain, \
         1 abandoned, 2 discarded"
    );
    assert!(!{
        let mut ledger = Ledger::default();
        ledger.accepted = 1;
        ledger
    }
    .is_balanced());
}

#[derive(Clone, Debug)]
enum Op {
    Put,
    Get,
    Resolve(usize, u8),
    Retry(usize),
    Shutdown,
    ShutdownNow,
    Worker,
    DropWorker,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Put),
        4 => Just(Op::Get),
        4 => (any::<usize>(), 0..4u8).prop_map(|(i, o)| Op::Resolve(i, o)),
        1 => any::<usize>().prop_map(Op::Retry),
        1 => Just(Op::Shutdown),
        1 => Just(Op::ShutdownNow),
        1 => Just(Op::Worker),
        1 => Just(Op::DropWorker),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Buffered,
    InFlight,
    Ended(&'static str),
}

fn check(queue: &Queue<u32>, model: &BTreeMap<JobId, State>) {
    let ledger = queue.ledger();
    let count = |s: State| model.values().filter(|&&v| v == s).count() as u64;
    assert_eq!(ledger.accepted, model.len() as u64);
    assert_eq!(ledger.buffered, count(State::Buffered));
    assert_eq!(ledger.in_flight, count(State::InFlight));
    assert_eq!(ledger.succeeded, count(State::Ended("succeeded")));
    assert_eq!(ledger.rejected, count(State::Ended("rejected")));
    assert_eq!(ledger.uncertain, count(State::Ended("uncertain")));
    assert_eq!(ledger.abandoned, count(State::Ended("abandoned")));
    assert_eq!(ledger.discarded, count(State::Ended("discarded")));
    assert!(ledger.is_balanced());
    assert_eq!(queue.unfinished(), ledger.unfinished());
}

fn run_ops(capacity: Option<usize>, ops: Vec<Op>) {
    let queue = match capacity {
        Some(n) => Queue::bounded(n).unwrap(),
        None => Queue::unbounded(),
    };
    let mut model: BTreeMap<JobId, State> = BTreeMap::new();
    let mut held: Vec<Delivery<'_, u32>> = Vec::new();
    let mut workers = Vec::new();
    let mut had_worker = false;
    let mut shut_down = false;
    let mut next = 0u32;
    for op in ops {
        match op {
            Op::Put => {
                next += 1;
                let full = capacity.is_some_and(|c| queue.len() >= c);
                match queue.try_put(next) {
                    Ok(id) => {
                        let no_workers = had_worker && workers.is_empty();
                        assert!(!shut_down && !no_workers && !full);
                        assert!(model.insert(id, State::Buffered).is_none(), "id reused");
                    }
                    Err(TryPutError::ShutDown(n)) => assert!(shut_down && n == next),
                    Err(TryPutError::NoWorkers(n)) => {
                        assert!(!shut_down && had_worker && workers.is_empty() && n == next);
                    }
                    Err(TryPutError::Full(n)) => assert!(full && n == next),
                    Err(other) => panic!("a refusal this model does not know: {other:?}"),
                }
            }
            Op::Get => match queue.try_get() {
                Ok(delivery) => {
                    assert_eq!(
                        model.insert(delivery.id(), State::InFlight),
                        Some(State::Buffered)
                    );
                    held.push(delivery);
                }
                Err(_) => assert_eq!(queue.len(), 0),
            },
            Op::Resolve(i, outcome) if !held.is_empty() => {
                let delivery = held.swap_remove(i % held.len());
                let id = delivery.id();
                let end = match outcome {
                    0 => {
                        delivery.resolve(Outcome::Succeeded);
                        "succeeded"
                    }
                    1 => {
                        delivery.resolve(Outcome::Rejected);
                        "rejected"
                    }
                    2 => {
                        delivery.resolve(Outcome::Uncertain);
                        "uncertain"
                    }
                    _ => {
                        drop(delivery);
                        "abandoned"
                    }
                };
                assert_eq!(model.insert(id, State::Ended(end)), Some(State::InFlight));
            }
            Op::Retry(i) if !held.is_empty() => {
                let delivery = held.swap_remove(i % held.len());
                let id = delivery.id();
                match delivery.retry() {
                    Ok(back) => {
                        assert_eq!(back, id);
                        model.insert(id, State::Buffered);
                    }
                    Err(delivery) => held.push(delivery),
                }
            }
            Op::Resolve(..) | Op::Retry(_) => {}
            Op::Shutdown => {
                assert_eq!(queue.shutdown(), !shut_down);
                shut_down = true;
            }
            Op::ShutdownNow => {
                shut_down = true;
                for (id, _) in queue.shutdown_now() {
                    assert_eq!(
                        model.insert(id, State::Ended("discarded")),
                        Some(State::Buffered)
                    );
                }
            }
            Op::Worker => {
                workers.push(queue.worker());
                had_worker = true;
            }
            Op::DropWorker => {
                workers.pop();
            }
        }
        check(&queue, &model);
    }
    // Every accepted id ends exactly once.
    for delivery in held.drain(..) {
        let id = delivery.id();
        delivery.succeed();
        model.insert(id, State::Ended("succeeded"));
    }
    for (id, _) in queue.shutdown_now() {
        assert_eq!(
            model.insert(id, State::Ended("discarded")),
            Some(State::Buffered)
        );
    }
    check(&queue, &model);
    assert!(model.values().all(|s| matches!(s, State::Ended(_))));
    assert_eq!(queue.unfinished(), 0);
    drop(workers);
}

proptest! {
    // Under Miri, a handful of cases: each case is cheap, but Miri runs ~1000x slower.
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn ledger_identity_holds_for_random_operations(
        capacity in prop_oneof![Just(None), (1..4usize).prop_map(Some)],
        ops in proptest::collection::vec(op(), 0..if cfg!(miri) { 20 } else { 80 }),
    ) {
        run_ops(capacity, ops);
    }
}
