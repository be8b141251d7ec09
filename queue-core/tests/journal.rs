//! The journal: every job event with its id, in causal order per id, agreeing with the
//! ledger; a panicking or re-entrant journal; and the ready `Record`.

mod common;

#[cfg(feature = "std")]
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock, Weak};
#[cfg(feature = "std")]
use std::{sync::Barrier, thread};

#[cfg(feature = "std")]
use futures_lite::future::{block_on, or};
#[cfg(feature = "std")]
use tally_queue::{AbandonPolicy, JobId, JobState, Outcome, Record};
use tally_queue::{JobEvent, Journal, Queue, TryGetError};

use common::{within, Log};

/// Checks that `events` is a path of the job life cycle documented on `JobEvent`, and
/// returns its final event (None if the job is still pending).
#[cfg(feature = "std")]
fn check_path(events: &[JobEvent]) -> Option<JobEvent> {
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum At {
        Buffered,
        InFlight,
        Abandoned,
        Redelivering,
        Discarded,
        Done,
    }
    let mut at = None;
    let mut last = None;
    for event in events {
        let next = match (at, event) {
            (None, JobEvent::Accepted(_)) => At::Buffered,
            (Some(At::Buffered), JobEvent::Delivered { .. }) => At::InFlight,
            // Drained (final), or landed after a drain (a dead letter follows).
            (Some(At::Buffered), JobEvent::Discarded(_)) => At::Discarded,
            (Some(At::InFlight), JobEvent::Ended { .. }) => At::Done,
            (Some(At::InFlight), JobEvent::Abandoned { .. }) => At::Abandoned,
            (Some(At::InFlight), JobEvent::Retried(_)) => At::Buffered,
            (Some(At::Buffered), JobEvent::RetryRefused(_)) => At::InFlight,
            // Refused outright: its attempts were used up.
            (Some(At::InFlight), JobEvent::RetryRefused(_)) => At::InFlight,
            (Some(At::Abandoned), JobEvent::Redelivered { .. }) => At::Redelivering,
            (Some(At::Abandoned), JobEvent::DeadLettered { .. }) => At::Done,
            (Some(At::Redelivering), JobEvent::Delivered { .. }) => At::InFlight,
            // Drained from the lane (final), or refused by a closed lane (a dead letter
            // follows).
            (Some(At::Redelivering), JobEvent::Discarded(_)) => At::Discarded,
            (Some(At::Discarded), JobEvent::DeadLettered { .. }) => At::Done,
            (at, event) => panic!("{event:?} cannot follow {at:?} in {events:?}"),
        };
        at = Some(next);
        last = Some(*event);
    }
    match at {
        Some(At::Done) => last,
        // Final under `Abandon`; final when drained from the lane.
        Some(At::Abandoned | At::Discarded) => last,
        Some(At::Redelivering) => None,
        _ => None,
    }
}

/// The race the issue names, made deterministic: a journal that, when told `Accepted`,
/// first tries to take the item (as a getter on another thread could, between the
/// putter's push and its next line). It finds nothing: `Accepted` is recorded before the
/// item is in the buffer, so no `Delivered` can precede it.
#[test]
fn accepted_is_recorded_before_any_getter_can_take_the_item() {
    struct Snatch {
        queue: OnceLock<Weak<Queue<u8>>>,
        seen: Mutex<Vec<(JobEvent, bool)>>,
    }
    impl Journal for Snatch {
        fn record(&self, event: JobEvent) {
            let mut took = false;
            if let JobEvent::Accepted(_) = event {
                if let Some(queue) = self.queue.get().and_then(Weak::upgrade) {
                    match queue.try_get() {
                        Ok(job) => {
                            took = true;
                            job.succeed();
                        }
                        Err(TryGetError::Empty) => {}
                        Err(other) => panic!("{other:?}"),
                    }
                }
            }
            self.seen.lock().unwrap().push((event, took));
        }
    }
    let snatch = Arc::new(Snatch {
        queue: OnceLock::new(),
        seen: Mutex::new(Vec::new()),
    });
    let queue = Arc::new(Queue::unbounded().with_journal(Arc::clone(&snatch)));
    snatch.queue.set(Arc::downgrade(&queue)).unwrap();
    let id = queue.try_put(1).unwrap();
    let seen = snatch.seen.lock().unwrap().clone();
    assert_eq!(seen, [(JobEvent::Accepted(id), false)]);
    assert_eq!(queue.len(), 1);
}

/// Many producers and consumers, with retries: every id's events form a path of the life
/// cycle, in order, as the journal received them.
#[test]
#[cfg(feature = "std")]
fn events_for_one_id_arrive_in_causal_order_under_concurrency() {
    let per_producer = common::scaled(2_000, 50);
    let log = Arc::new(Log::default());
    let queue = Queue::<usize>::bounded(4)
        .unwrap()
        .with_journal(Arc::clone(&log));
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Ok(job) = queue.get_blocking() {
                    match *job % 4 {
                        0 => drop(job.retry().map_err(|job| job.reject())),
                        1 => drop(job),
                        _ => drop(job.succeed()),
                    }
                }
            });
        }
        let producers: Vec<_> = (0..2)
            .map(|p| {
                let queue = &queue;
                s.spawn(move || {
                    for n in 0..per_producer {
                        queue.put_blocking(p * per_producer + n + 1).unwrap();
                    }
                })
            })
            .collect();
        for producer in producers {
            producer.join().unwrap();
        }
        queue.shutdown();
    });
    let ledger = queue.join_blocking();
    let by_id = log.by_id();
    assert_eq!(by_id.len() as u64, ledger.accepted);
    for events in by_id.values() {
        assert!(check_path(events).is_some(), "unfinished: {events:?}");
    }
}

/// The seed's abort scenario, checked against the journal: handlers running when the
/// abort comes see the request and end uncertain; the record names them, names the
/// drained ids as discarded, and agrees with the ledger.
#[test]
#[cfg(feature = "std")]
fn an_abort_while_handlers_run_agrees_with_the_record_and_the_ledger() {
    const HANDLERS: usize = 2;
    let record = Arc::new(Record::new());
    let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    for n in 0..6 {
        queue.try_put(n).unwrap();
    }
    let started = Barrier::new(HANDLERS + 1);
    let (handled, drained) = thread::scope(|s| {
        let handlers: Vec<_> = (0..HANDLERS)
            .map(|_| {
                s.spawn(|| {
                    let job = queue.get_blocking().unwrap();
                    started.wait();
                    block_on(or(job.cancelled(), std::future::pending()));
                    let id = job.id();
                    job.uncertain();
                    id
                })
            })
            .collect();
        started.wait();
        assert_eq!(record.in_flight().len(), HANDLERS);
        let drained = queue.abort();
        let handled: BTreeSet<JobId> = handlers.into_iter().map(|h| h.join().unwrap()).collect();
        (handled, drained)
    });
    let ledger = queue.join_blocking();
    assert_eq!(
        record.uncertain().into_iter().collect::<BTreeSet<_>>(),
        handled
    );
    let discarded = record.ids(|state| *state == JobState::Discarded);
    assert_eq!(
        discarded,
        drained.iter().map(|(id, _)| *id).collect::<Vec<_>>()
    );
    assert_eq!(ledger.uncertain, handled.len() as u64);
    assert_eq!(ledger.discarded, discarded.len() as u64);
    assert!(record.pending().is_empty());
}

/// The fault run of the issue: redelivery, random abandonments, uncertain endings and
/// retries, then an abort at a random point; every accepted id has exactly one final
/// event, and the finals match the ledger count by count.
#[test]
#[cfg(feature = "std")]
fn every_accepted_id_has_one_final_event_matching_the_ledger() {
    let jobs = common::scaled(600, 40);
    for seed in 0..common::scaled(8, 2) as u64 {
        let log = Arc::new(Log::default());
        let queue = Arc::new(
            Queue::<usize>::unbounded()
                .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
                .with_journal(Arc::clone(&log)),
        );
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let queue = Arc::clone(&queue);
                thread::spawn(move || {
                    let mut x = seed * 7 + w + 1;
                    while let Ok(job) = queue.get_blocking() {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        match x % 5 {
                            0 => drop(job),
                            1 => drop(job.uncertain()),
                            2 => drop(job.retry().map_err(|job| job.reject())),
                            _ if job.is_cancelled() => drop(job.uncertain()),
                            _ => drop(job.succeed()),
                        }
                    }
                })
            })
            .collect();
        let abort_at = (seed as usize * 97) % jobs;
        let mut drained = Vec::new();
        for n in 0..jobs {
            if n == abort_at {
                drained = queue.abort();
            }
            let _ = queue.try_put(n);
        }
        queue.shutdown();
        for worker in workers {
            within(20, move || worker.join().unwrap());
        }
        let ledger = queue.join_blocking();
        let dead = queue.take_dead_letters();
        assert!(ledger.is_balanced());
        let by_id = log.by_id();
        let mut finals: BTreeMap<&str, u64> = BTreeMap::new();
        for events in by_id.values() {
            let last = check_path(events).unwrap_or_else(|| panic!("no final: {events:?}"));
            let kind = match last {
                JobEvent::Ended {
                    outcome: Outcome::Succeeded,
                    ..
                } => "succeeded",
                JobEvent::Ended {
                    outcome: Outcome::Rejected,
                    ..
                } => "rejected",
                JobEvent::Ended {
                    outcome: Outcome::Uncertain,
                    ..
                } => "uncertain",
                JobEvent::DeadLettered { .. }
                    if events.contains(&JobEvent::Discarded(last.id())) =>
                {
                    "discarded"
                }
                JobEvent::DeadLettered { .. } => "abandoned",
                JobEvent::Discarded(_) => "discarded",
                other => panic!("unexpected final {other:?}"),
            };
            *finals.entry(kind).or_default() += 1;
        }
        let count = |kind| finals.get(kind).copied().unwrap_or(0);
        assert_eq!(count("succeeded"), ledger.succeeded);
        assert_eq!(count("rejected"), ledger.rejected);
        assert_eq!(count("uncertain"), ledger.uncertain);
        assert_eq!(count("abandoned"), ledger.abandoned);
        assert_eq!(count("discarded"), ledger.discarded);
        assert_eq!(by_id.len() as u64, ledger.accepted);
        assert_eq!(
            dead.len() as u64,
            ledger.abandoned + ledger.discarded - drained.len() as u64
        );
    }
}

/// A journal that panics on every event loses nothing and hangs nobody: a blocked getter
/// is still woken, every item is delivered and counted, and the panics are counted.
#[test]
#[cfg(feature = "std")]
fn a_panicking_journal_loses_nothing_and_hangs_nobody() {
    struct Broken;
    impl Journal for Broken {
        fn record(&self, _: JobEvent) {
            panic!("journal unavailable");
        }
    }
    let ledger = within(10, || {
        let queue = Arc::new(Queue::<u8>::bounded(1).unwrap().with_journal(Broken));
        let getter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut got = Vec::new();
                while let Ok(job) = queue.get_blocking() {
                    got.push(job.succeed());
                }
                got
            })
        };
        for n in 0..3 {
            queue.put_blocking(n).unwrap();
        }
        queue.shutdown();
        assert_eq!(getter.join().unwrap(), [0, 1, 2]);
        assert_eq!(queue.journal_panics(), 9);
        queue.join_blocking()
    });
    assert_eq!((ledger.accepted, ledger.succeeded), (3, 3));
}

/// A journal that re-enters the queue (reads the ledger, puts a follow-up job once, and
/// shuts the queue down on its first ending) gets the documented behaviour: its calls run
/// nested and record their own events; nothing hangs.
#[test]
fn a_reentrant_journal_does_not_hang() {
    struct Reenter {
        queue: OnceLock<Weak<Queue<u8>>>,
        log: Log,
    }
    impl Journal for Reenter {
        fn record(&self, event: JobEvent) {
            self.log.record(event);
            let Some(queue) = self.queue.get().and_then(Weak::upgrade) else {
                return;
            };
            let _ = queue.ledger();
            if let JobEvent::Ended { .. } = event {
                let _ = queue.try_put(9);
                queue.shutdown();
            }
        }
    }
    let (events, ledger) = within(5, || {
        let journal = Arc::new(Reenter {
            queue: OnceLock::new(),
            log: Log::default(),
        });
        let queue = Arc::new(Queue::unbounded().with_journal(Arc::clone(&journal)));
        journal.queue.set(Arc::downgrade(&queue)).unwrap();
        queue.try_put(1).unwrap();
        queue.try_get().unwrap().succeed();
        let follow_up = queue.try_get().unwrap();
        follow_up.succeed();
        let events = journal.log.0.lock().unwrap().clone();
        (events, queue.ledger())
    });
    assert_eq!((ledger.accepted, ledger.succeeded), (2, 2));
    assert!(matches!(events[0], JobEvent::Accepted(_)));
    // The follow-up put ran inside the first `Ended` call and was recorded right after it.
    assert!(matches!(events[2], JobEvent::Ended { .. }));
    assert!(matches!(events[3], JobEvent::Accepted(_)));
}

/// A journal installed on a queue already shut down: the queue stays shut down, on a
/// bounded queue (whose items move to another buffer for the journal) as on an unbounded
/// one. Its buffered item is still delivered, then gets see `ShutDown`.
#[test]
#[cfg(feature = "std")]
fn a_journal_installed_after_shutdown_keeps_the_queue_shut_down() {
    for queue in [Queue::bounded(4).unwrap(), Queue::unbounded()] {
        queue.try_put(1u8).unwrap();
        queue.shutdown();
        let queue = queue.with_journal(Log::default());
        assert_eq!(queue.try_get().unwrap().succeed(), 1);
        assert_eq!(queue.try_get().err(), Some(TryGetError::ShutDown));
        assert!(queue.is_shut_down());
    }
}

/// Issue 31, finding 6: after a refused `retry()`, the `Record` says the job is in flight
/// as the delivery's own attempt (here 2, after one redelivery), not attempt 1: whether the
/// retry was refused outright (its attempts used up) or after it was noted (an immediate
/// shutdown closed the queue to returns in between).
#[test]
#[cfg(feature = "std")]
fn after_a_refused_retry_the_record_keeps_the_deliverys_attempt() {
    for max_attempts in [2, 3] {
        let record = Arc::new(Record::new());
        let queue = Queue::unbounded()
            .with_abandon_policy(AbandonPolicy::redeliver(max_attempts).unwrap())
            .with_journal(Arc::clone(&record));
        let id = queue.try_put("job").unwrap();
        drop(queue.try_get().unwrap());
        let job = queue.try_get().unwrap();
        assert_eq!(job.attempt(), 2);
        assert_eq!(record.state(id), Some(JobState::InFlight { attempt: 2 }));
        if max_attempts == 3 {
            queue.shutdown_now();
        }
        let job = job
            .retry()
            .expect_err("no third attempt, or no returns after an immediate shutdown");
        assert_eq!(job.attempt(), 2, "the delivery is unchanged");
        assert_eq!(
            record.state(id),
            Some(JobState::InFlight { attempt: 2 }),
            "the record disagrees with the delivery it describes (max {max_attempts})"
        );
        assert_eq!(record.in_flight(), [id]);
        job.succeed();
        assert_eq!(record.state(id), Some(JobState::Ended(Outcome::Succeeded)));
    }
}

/// With attempts that never reset (finding 2), an accepted retry comes back as the next
/// attempt: the `Record` says the job waits for that attempt, as the delivery that follows
/// reports it.
#[test]
#[cfg(feature = "std")]
fn after_a_retry_the_record_says_which_attempt_comes_next() {
    let record = Arc::new(Record::new());
    let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    let id = queue.try_put("job").unwrap();
    queue.try_get().unwrap().retry().unwrap();
    let buffered = record.state(id);
    let again = queue.try_get().unwrap();
    assert_eq!(
        buffered,
        Some(JobState::Buffered {
            attempt: again.attempt()
        }),
        "the record announced one attempt, the delivery is another"
    );
    assert_eq!(again.attempt(), 2);
    again.succeed();
}
