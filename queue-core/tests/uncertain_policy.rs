//! `AbandonPolicy::Uncertain`: a delivery dropped unresolved ends as `Outcome::Uncertain`,
//! for effects that must not repeat: never redelivered, counted uncertain, the item
//! dropped with the delivery.

mod common;

use std::sync::{Arc, Mutex};

use tally_queue::{
    AbandonPolicy, JobEvent, JobState, Journal, Outcome, Queue, Record, TryGetError,
};

use common::{panicking_worker, within, Log};

/// Two journals in one: the log (for order) and a `Record` (for the final state).
struct Both(Arc<Log>, Arc<Record>);

impl Journal for Both {
    fn record(&self, event: JobEvent) {
        self.0.record(event);
        self.1.record(event);
    }
}

fn uncertain_queue<T>() -> (Queue<T>, Arc<Log>, Arc<Record>) {
    let log = Arc::new(Log::default());
    let record = Arc::new(Record::new());
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::Uncertain)
        .with_journal(Both(Arc::clone(&log), Arc::clone(&record)));
    (queue, log, record)
}

/// Counts drops of the item, to see it dropped with the delivery.
struct Tracked(Arc<Mutex<u32>>);

impl Drop for Tracked {
    fn drop(&mut self) {
        *self.0.lock().unwrap() += 1;
    }
}

#[test]
fn the_policy_is_installed_and_reported() {
    let queue = Queue::<u8>::unbounded().with_abandon_policy(AbandonPolicy::Uncertain);
    assert_eq!(queue.abandon_policy(), AbandonPolicy::Uncertain);
    assert_eq!(AbandonPolicy::Uncertain.max_attempts(), None);
}

#[test]
fn a_panicking_consumer_ends_uncertain_and_is_never_redelivered() {
    within(10, || {
        let (queue, log, record) = uncertain_queue::<u32>();
        let poison = queue.try_put(13).unwrap();
        let fine = queue.try_put(1).unwrap();
        queue.shutdown();
        let seen = panicking_worker(&queue, 13);
        // Each id delivered once: the poison item was not redelivered.
        assert_eq!(seen, [(poison, 1), (fine, 1)]);
        let ledger = queue.ledger();
        assert_eq!(
            (
                ledger.accepted,
                ledger.succeeded,
                ledger.uncertain,
                ledger.abandoned
            ),
            (2, 1, 1, 0)
        );
        assert!(ledger.is_balanced());
        assert_eq!(ledger.unfinished(), 0);
        assert_eq!(queue.redeliveries(), 0);
        assert_eq!(queue.dead_letters(), 0);
        assert_eq!(
            log.of(poison),
            [
                JobEvent::Accepted(poison),
                JobEvent::Delivered {
                    id: poison,
                    attempt: 1
                },
                JobEvent::Abandoned {
                    id: poison,
                    panicking: true
                },
                JobEvent::Ended {
                    id: poison,
                    outcome: Outcome::Uncertain
                },
            ]
        );
        assert_eq!(
            record.state(poison),
            Some(JobState::Ended(Outcome::Uncertain))
        );
        assert_eq!(record.uncertain(), [poison]);
        assert!(record.abandoned().is_empty());
        // Exactly one final event per id, as `is_final` says.
        for id in [poison, fine] {
            assert_eq!(log.of(id).iter().filter(|e| e.is_final()).count(), 1);
        }
    });
}

#[test]
fn a_dropped_delivery_drops_its_item_and_a_join_returns() {
    within(10, || {
        let (queue, _log, _record) = uncertain_queue::<Tracked>();
        let drops = Arc::new(Mutex::new(0));
        queue.try_put(Tracked(Arc::clone(&drops))).unwrap();
        let job = queue.try_get().unwrap();
        assert_eq!(*drops.lock().unwrap(), 0);
        drop(job);
        assert_eq!(*drops.lock().unwrap(), 1);
        assert!(matches!(queue.try_get(), Err(TryGetError::Empty)));
        let ledger = futures_lite::future::block_on(queue.join());
        assert_eq!(
            (ledger.uncertain, ledger.abandoned, ledger.in_flight),
            (1, 0, 0)
        );
    });
}

#[test]
fn after_an_immediate_shutdown_a_dropped_delivery_still_ends_uncertain() {
    let (queue, log, _record) = uncertain_queue::<u8>();
    queue.try_put(1).unwrap();
    let queued = queue.try_put(2).unwrap();
    let job = queue.try_get().unwrap();
    let id = job.id();
    let drained = queue.shutdown_now();
    assert_eq!(
        drained.into_iter().map(|(id, _)| id).collect::<Vec<_>>(),
        [queued]
    );
    drop(job);
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.uncertain, ledger.discarded, ledger.abandoned),
        (1, 1, 0)
    );
    assert!(ledger.is_balanced());
    assert_eq!(
        log.of(id).last(),
        Some(&JobEvent::Ended {
            id,
            outcome: Outcome::Uncertain
        })
    );
}

#[test]
fn a_resolved_delivery_is_untouched_by_the_policy() {
    let (queue, log, _record) = uncertain_queue::<u8>();
    let id = queue.try_put(1).unwrap();
    queue.try_get().unwrap().reject();
    let ledger = queue.ledger();
    assert_eq!((ledger.rejected, ledger.uncertain), (1, 0));
    assert!(!log
        .of(id)
        .iter()
        .any(|e| matches!(e, JobEvent::Abandoned { .. })));
}
