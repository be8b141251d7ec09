//! The ledger: identity, display, and a property test of random operation sequences
//! against a model that tracks every id.

mod common;

use std::collections::BTreeMap;
#[cfg(feature = "std")]
use std::sync::atomic::{AtomicBool, Ordering};

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
    // Retried items waiting for delivery: they hold no slot of a bounded queue.
    let mut returned = std::collections::BTreeSet::new();
    let mut workers = Vec::new();
    let mut had_worker = false;
    let mut shut_down = false;
    let mut next = 0u32;
    for op in ops {
        match op {
            Op::Put => {
                next += 1;
                let fresh = queue.len() - returned.len();
                let full = capacity.is_some_and(|c| fresh >= c);
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
                    // A returned item comes back as its next attempt.
                    assert_eq!(returned.remove(&delivery.id()), delivery.attempt() > 1);
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
                        assert!(!shut_down);
                        assert_eq!(back, id);
                        model.insert(id, State::Buffered);
                        returned.insert(id);
                    }
                    // Refused only once shut down (the default policy sets no limit).
                    Err(delivery) => {
                        assert!(shut_down);
                        held.push(delivery);
                    }
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
                    returned.remove(&id);
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

/// One observer's successive snapshots: what went wrong between them.
#[derive(Default)]
#[cfg(feature = "std")]
struct Dips {
    /// Per counter: how many snapshots went down, and the largest fall.
    falls: BTreeMap<&'static str, (u64, u64)>,
    /// Gauges above `accepted`.
    gauges: Vec<String>,
    snapshots: u64,
}

#[cfg(feature = "std")]
impl Dips {
    fn compare(&mut self, before: &Ledger, now: &Ledger) {
        self.snapshots += 1;
        for (name, was, is) in [
            ("accepted", before.accepted, now.accepted),
            ("succeeded", before.succeeded, now.succeeded),
            ("rejected", before.rejected, now.rejected),
            ("uncertain", before.uncertain, now.uncertain),
            ("abandoned", before.abandoned, now.abandoned),
            ("discarded", before.discarded, now.discarded),
        ] {
            if is < was {
                let entry = self.falls.entry(name).or_default();
                entry.0 += 1;
                entry.1 = entry.1.max(was - is);
            }
        }
        if (now.buffered > now.accepted || now.in_flight > now.accepted) && self.gauges.len() < 5 {
            self.gauges.push(now.to_string());
        }
    }
}

/// Runs the workload of `ledger_counters_never_go_down_between_snapshots` on `queue`.
#[cfg(feature = "std")]
fn counters_never_go_down(queue: Queue<u64>) -> Result<Dips, String> {
    let per_producer = common::scaled(5_000, 100) as u64;
    let done = AtomicBool::new(false);
    let dips = std::thread::scope(|s| {
        let observer = s.spawn(|| {
            let mut dips = Dips::default();
            let mut before = queue.ledger();
            while !done.load(Ordering::Relaxed) {
                let now = queue.ledger();
                dips.compare(&before, &now);
                before = now;
            }
            dips
        });
        let consumers: Vec<_> = (0..2)
            .map(|c| {
                let queue = &queue;
                s.spawn(move || {
                    let mut n: u64 = c;
                    while let Ok(job) = queue.get_blocking() {
                        n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        match (n >> 33) % 6 {
                            0 => {
                                job.reject();
                            }
                            1 => {
                                job.uncertain();
                            }
                            2 => {
                                let _ = job.retry().map_err(|job| job.reject());
                            }
                            3 => drop(job),
                            _ => {
                                job.succeed();
                            }
                        }
                    }
                })
            })
            .collect();
        let producers: Vec<_> = (0..2)
            .map(|p| {
                let queue = &queue;
                s.spawn(move || {
                    for n in 0..per_producer {
                        if queue.put_blocking(p * per_producer + n).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        for producer in producers {
            producer.join().unwrap();
        }
        queue.shutdown_now();
        for consumer in consumers {
            consumer.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        observer.join().unwrap()
    });
    let ledger = queue.ledger();
    if !ledger.is_balanced() || ledger.unfinished() != 0 {
        return Err(format!("at rest: {ledger}"));
    }
    Ok(dips)
}

/// Issue 31, finding 8: two producers, two consumers (succeeding, rejecting, ending
/// uncertain, retrying, dropping deliveries under `Redeliver`) and a `shutdown_now` at the
/// end, against an observer that snapshots the ledger in a loop. None of the six counts may
/// ever be lower than in the observer's previous snapshot, and neither gauge may exceed
/// `accepted`. On a ring (`bounded(128)`) and an unbounded queue, each run again on fresh
/// queues until a dip shows or 600 ms have passed.
#[test]
#[cfg(feature = "std")]
fn ledger_counters_never_go_down_between_snapshots() {
    let policy = tally_queue::AbandonPolicy::redeliver(3).unwrap();
    type Make = fn() -> Queue<u64>;
    let kinds: [(&str, Make); 2] = [
        ("bounded(128)", || Queue::bounded(128).unwrap()),
        ("unbounded", Queue::unbounded),
    ];
    let mut failures = Vec::new();
    for (kind, make) in kinds {
        // Runs on fresh queues until a dip shows, up to a time budget (one run under Miri).
        let budget = std::time::Instant::now();
        let mut runs = 0;
        while runs < common::scaled(1_000, 1)
            && budget.elapsed() < std::time::Duration::from_millis(600)
        {
            runs += 1;
            match counters_never_go_down(make().with_abandon_policy(policy)) {
                Ok(dips) if dips.falls.is_empty() && dips.gauges.is_empty() => continue,
                Ok(dips) => failures.push(format!(
                    "{kind}, run {runs}: over {} snapshots, (times, largest fall) per counter: \
                     {:?}; gauges above accepted: {:?}",
                    dips.snapshots, dips.falls, dips.gauges
                )),
                Err(why) => failures.push(format!("{kind}, run {runs}: {why}")),
            }
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every item the queue holds for delivery is visible: buffered by a put, redelivered
/// after a drop under `Redeliver`, or put back by a retry, each counts in `len()` and in
/// the ledger's `buffered` (not `in_flight`), on every kind of queue.
#[test]
fn every_item_held_for_delivery_counts_in_len_and_as_buffered() {
    let policy = tally_queue::AbandonPolicy::redeliver(3).unwrap();
    for (kind, queue) in common::every_kind::<&str>(policy) {
        queue.try_put("redelivered").unwrap();
        queue.try_put("retried").unwrap();
        let redelivered = queue.try_get().unwrap();
        let retried = queue.try_get().unwrap();
        queue.try_put("buffered").unwrap();
        let held = |len: usize, buffered: u64, in_flight: u64| {
            let ledger = queue.ledger();
            assert_eq!(queue.len(), len, "{kind}: len; {ledger}");
            assert_eq!(queue.is_empty(), len == 0, "{kind}");
            assert_eq!(
                (ledger.buffered, ledger.in_flight),
                (buffered, in_flight),
                "{kind}: {ledger}"
            );
            assert!(ledger.is_balanced(), "{kind}: {ledger}");
            assert_eq!(queue.unfinished(), 3, "{kind}");
        };
        held(1, 1, 2);
        drop(redelivered);
        held(2, 2, 1);
        retried.retry().unwrap();
        held(3, 3, 0);
        let taken: Vec<_> = std::iter::from_fn(|| queue.try_get().ok()).collect();
        assert_eq!(taken.len(), 3, "{kind}");
        held(0, 0, 3);
        for job in taken {
            job.succeed();
        }
        assert!(queue.is_settled(), "{kind}");
    }
}
