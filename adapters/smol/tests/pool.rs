//! The worker-pool demo (`examples/pool`): the printed ledger matches what the queue's
//! record says of each id, and every accepted job ends exactly once, drained, handed back,
//! or stopped when asked.

#[path = "../examples/pool/pool.rs"]
mod pool;

use std::collections::BTreeSet;
use std::time::Duration;

use pool::{Kind, Plan, Report};
use tally_queue::{JobId, JobState, Ledger, Outcome};

fn plan(work: Duration, drain_timeout: Duration) -> Plan {
    Plan {
        producers: 3,
        jobs_per_producer: 6,
        workers: 4,
        capacity: 4,
        work,
        drain_timeout,
        grace: Duration::from_secs(10),
        verbose: false,
        dead_producer: false,
    }
}

fn ended(report: &Report, outcome: Outcome) -> Vec<JobId> {
    report.ids_in(JobState::Ended(outcome))
}

/// Every accepted id has exactly one final state in the record, and it is the one the
/// ledger counts: ended by a worker, or handed back by the drain as discarded.
fn assert_each_id_ends_once(report: &Report) {
    let accepted: BTreeSet<JobId> = report.accepted.iter().map(|(id, _)| *id).collect();
    assert_eq!(accepted.len(), report.accepted.len(), "ids are unique");
    let fated: Vec<JobId> = report.fates.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        fated,
        report
            .accepted
            .iter()
            .map(|(id, _)| *id)
            .collect::<Vec<_>>()
    );
    assert!(
        report.fates.iter().all(|(_, state)| !state.is_pending()),
        "{:?}",
        report.fates
    );
    assert_eq!(
        report.ids_in(JobState::Discarded).len(),
        report.returned.len()
    );
    let discarded: BTreeSet<JobId> = report.ids_in(JobState::Discarded).into_iter().collect();
    assert_eq!(discarded, report.returned.iter().copied().collect());
    let ledger = report.ledger;
    assert_eq!(
        ledger.succeeded,
        ended(report, Outcome::Succeeded).len() as u64
    );
    assert_eq!(
        ledger.rejected,
        ended(report, Outcome::Rejected).len() as u64
    );
    assert_eq!(
        ledger.uncertain,
        ended(report, Outcome::Uncertain).len() as u64
    );
    assert_eq!(ledger.discarded, report.returned.len() as u64);
    assert!(ledger.is_balanced());
    assert_eq!(ledger.unfinished(), 0);
    // What needs reconciling is exactly what ended uncertain (nothing was abandoned).
    assert_eq!(report.to_reconcile, ended(report, Outcome::Uncertain));
}

fn id_of(report: &Report, kind: Kind) -> JobId {
    let ids: Vec<JobId> = report
        .accepted
        .iter()
        .filter(|(_, k)| *k == kind)
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(ids.len(), 1, "one {kind:?} job");
    ids[0]
}

#[test]
fn a_graceful_drain_ends_every_job_and_the_record_says_how() {
    let report = pool::run(&plan(Duration::from_millis(2), Duration::from_secs(30)));
    assert_each_id_ends_once(&report);
    assert!(report.drained_in_time);
    assert!(report.returned.is_empty() && report.still_in_flight.is_empty());

    // Exactly one job was rejected, the malformed one; exactly one uncertain, the write
    // that was never acknowledged.
    assert_eq!(
        ended(&report, Outcome::Rejected),
        [id_of(&report, Kind::Malformed)]
    );
    let unacknowledged = id_of(&report, Kind::UnacknowledgedWrite);
    assert_eq!(ended(&report, Outcome::Uncertain), [unacknowledged]);
    assert_eq!(report.to_reconcile, [unacknowledged]);
    assert_eq!(ended(&report, Outcome::Succeeded).len(), 16);

    let expected = {
        let mut ledger = Ledger::default();
        ledger.accepted = 18;
        ledger.succeeded = 16;
        ledger.rejected = 1;
        ledger.uncertain = 1;
        ledger
    };
    assert_eq!(report.ledger, expected);
    let summary = report.summary();
    assert!(summary.ends_with("ledger: accepted 18: 0 buffered, 0 in flight, 16 succeeded, 1 rejected, 1 uncertain, 0 abandoned, 0 discarded"));
    assert!(summary.contains("handed back: []"));
    assert!(summary.contains(&format!("to reconcile: [{unacknowledged}]")));
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
}

/// Each job takes far longer than the drain may, so jobs are still buffered and running
/// at the deadline: the queue hands the buffered ones back and asks the running ones to
/// stop; those end uncertain within the grace period, and the record lists them to
/// reconcile.
#[test]
fn a_drain_that_misses_its_deadline_hands_the_rest_back_and_stops_the_running_jobs() {
    let report = pool::run(&plan(Duration::from_millis(150), Duration::from_millis(20)));
    assert_each_id_ends_once(&report);
    assert!(!report.drained_in_time);
    assert!(!report.returned.is_empty());
    assert!(
        report.still_in_flight.is_empty(),
        "every worker stopped when asked"
    );

    // The last put found room only when a worker took a job, 150 ms of work before the
    // 20 ms deadline: at least that job was stopped mid-work.
    let unacknowledged = id_of(&report, Kind::UnacknowledgedWrite);
    let stopped: Vec<JobId> = ended(&report, Outcome::Uncertain)
        .into_iter()
        .filter(|id| *id != unacknowledged)
        .collect();
    assert!(!stopped.is_empty(), "{}", report.summary());
    assert!(stopped.iter().all(|id| report.to_reconcile.contains(id)));
    let ledger = report.ledger;
    assert_eq!(ledger.accepted, 18);
    assert!(report.summary().ends_with(&format!("ledger: {ledger}")));
}
