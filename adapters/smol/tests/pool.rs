//! The worker-pool demo (`examples/pool`): the printed ledger matches what the producers
//! and workers saw, and every accepted job ends exactly once, drained or handed back.

#[path = "../examples/pool/pool.rs"]
mod pool;

use std::collections::BTreeSet;
use std::time::Duration;

use pool::{Kind, Plan, Report};
use tally_queue::{JobId, Ledger, Outcome};

fn plan(work: Duration, drain_timeout: Duration) -> Plan {
    Plan {
        producers: 3,
        jobs_per_producer: 6,
        workers: 4,
        capacity: 4,
        work,
        drain_timeout,
        verbose: false,
        dead_producer: false,
    }
}

fn count(report: &Report, outcome: Outcome) -> u64 {
    report
        .outcomes
        .iter()
        .filter(|(_, _, o)| *o == outcome)
        .count() as u64
}

/// Every accepted id ends exactly once: decided by a worker, or handed back by the drain.
fn assert_each_id_ends_once(report: &Report) {
    let accepted: BTreeSet<JobId> = report.accepted.iter().copied().collect();
    assert_eq!(accepted.len(), report.accepted.len(), "ids are unique");
    let mut ended: Vec<JobId> = report.outcomes.iter().map(|(id, _, _)| *id).collect();
    ended.extend(&report.returned);
    ended.sort();
    assert_eq!(ended, accepted.into_iter().collect::<Vec<_>>());
}

#[test]
fn a_graceful_drain_ends_every_job_and_the_ledger_says_how() {
    let report = pool::run(&plan(Duration::from_millis(2), Duration::from_secs(30)));
    assert_each_id_ends_once(&report);
    assert!(report.drained_in_time);
    assert!(report.returned.is_empty());

    // Exactly one job was rejected, the malformed one; exactly one uncertain, the write
    // that was never acknowledged.
    let special: Vec<(Kind, Outcome)> = report
        .outcomes
        .iter()
        .filter(|(_, _, outcome)| *outcome != Outcome::Succeeded)
        .map(|(_, kind, outcome)| (*kind, *outcome))
        .collect();
    assert_eq!(special.len(), 2);
    assert_eq!(count(&report, Outcome::Succeeded), 16);
    assert!(special.contains(&(Kind::Malformed, Outcome::Rejected)));
    assert!(special.contains(&(Kind::UnacknowledgedWrite, Outcome::Uncertain)));

    let expected = {
        let mut ledger = Ledger::default();
        ledger.accepted = 18;
        ledger.succeeded = 16;
        ledger.rejected = 1;
        ledger.uncertain = 1;
        ledger
    };
    assert_eq!(report.ledger, expected);
    assert!(report
        .summary()
        .ends_with("ledger: accepted 18: 0 buffered, 0 in flight, 16 succeeded, 1 rejected, 1 uncertain, 0 abandoned, 0 discarded"));
    assert!(report.summary().contains("handed back: []"));
    assert!(report.shut_down_by_producers);
}

/// A producer that panics half-way does not hang the pool: its guard goes with it, the
/// last producer guard shuts the queue down, and the workers drain and stop. Its one job
/// is processed like any other.
#[test]
fn a_dead_producer_does_not_hang_the_pool() {
    let plan = Plan {
        dead_producer: true,
        ..plan(Duration::from_millis(2), Duration::from_secs(30))
    };
    let (done, report) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(pool::run(&plan)).unwrap());
    let report = report
        .recv_timeout(Duration::from_secs(20))
        .expect("the pool stops within 20 s");
    assert_eq!(report.producers_panicked, 1);
    assert!(report.shut_down_by_producers);
    assert!(report.drained_in_time);
    assert_each_id_ends_once(&report);
    assert_eq!(report.ledger.accepted, 19);
    assert_eq!(report.ledger.succeeded, 17);
    assert!(report.ledger.is_balanced());
}

#[test]
fn a_drain_that_misses_its_deadline_hands_the_rest_back() {
    // Each job takes far longer than the drain may, so jobs are still buffered at the
    // deadline: the queue shuts down immediately and returns them.
    let report = pool::run(&plan(Duration::from_millis(150), Duration::from_millis(20)));
    assert_each_id_ends_once(&report);
    assert!(!report.drained_in_time);
    assert!(!report.returned.is_empty());

    let ledger = report.ledger;
    assert_eq!(ledger.accepted, 18);
    assert_eq!(ledger.discarded, report.returned.len() as u64);
    assert_eq!(ledger.succeeded, count(&report, Outcome::Succeeded));
    assert_eq!(ledger.rejected, count(&report, Outcome::Rejected));
    assert_eq!(ledger.uncertain, count(&report, Outcome::Uncertain));
    assert_eq!(
        (ledger.buffered, ledger.in_flight, ledger.abandoned),
        (0, 0, 0)
    );
    assert!(ledger.is_balanced());
    assert!(report.summary().ends_with(&format!("ledger: {ledger}")));
}
