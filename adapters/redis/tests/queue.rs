//! The queue against a real `redis-server`, each test on tokio and on smol.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{after, open, options, redeliver, sleep, uncertain, Rt};
use tally_queue::{Backoff, Jitter, JobId, Outcome};
use tally_redis::{
    AbandonPolicy, Bytes, Error, GetError, JoinError, OpenError, PutError, Queue, Records,
    ResolveError, State, TryGetError,
};

/// Child processes enter here (see `roles`); outside a child this does nothing.
#[test]
fn child_role_entry() {
    common::roles::run_if_child();
}

async fn round_trip(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "jobs", options()).await;
    for n in 0..4u8 {
        let id = queue.try_put(vec![n]).await.unwrap();
        assert_eq!(id, JobId::from_raw(u64::from(n)));
    }
    let first = queue.get().await.unwrap();
    assert_eq!(
        (first.id().get(), first.attempt(), first.item()),
        (0, 1, &vec![0])
    );
    assert_eq!(first.succeed().await.unwrap(), vec![0]);
    queue.get().await.unwrap().reject().await.unwrap();
    queue.get().await.unwrap().uncertain().await.unwrap();
    let held = queue.get().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(ledger.accepted, 4);
    assert_eq!((ledger.buffered, ledger.in_flight), (0, 1));
    assert_eq!(
        (ledger.succeeded, ledger.rejected, ledger.uncertain),
        (1, 1, 1)
    );
    assert!(ledger.is_balanced());
    held.resolve(Outcome::Succeeded).await.unwrap();

    let uncertain = queue.uncertain(None, 10).await.unwrap();
    assert_eq!(uncertain.len(), 1);
    assert_eq!((uncertain[0].job.get(), uncertain[0].attempt), (2, 1));
    assert_eq!(uncertain[0].consumer, queue.consumer());
    assert_eq!(queue.decode(&uncertain[0].bytes).unwrap(), vec![2]);
    assert!(queue
        .remove_record(Records::Uncertain, &uncertain[0].key)
        .await
        .unwrap());
    assert!(queue.uncertain(None, 10).await.unwrap().is_empty());

    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    assert!(queue.shutdown().await.unwrap());
    assert!(!queue.shutdown().await.unwrap());
    assert!(matches!(queue.get().await, Err(GetError::ShutDown)));
    assert!(matches!(
        queue.try_put(vec![9]).await,
        Err(PutError::ShutDown(item)) if item == vec![9]
    ));
    let ledger = queue.join().await.unwrap();
    assert_eq!((ledger.accepted, ledger.succeeded), (4, 2));
    assert!(ledger.is_balanced());
    let status = queue.status().await.unwrap();
    // Shut down with nothing left: closed at once.
    assert_eq!(status.state, State::Closed);
    assert_eq!((status.redelivered, status.stale), (0, 0));
}

async fn bounded_refuses_when_full(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "small", options().bounded(2)).await;
    queue.try_put(vec![0]).await.unwrap();
    queue.try_put(vec![1]).await.unwrap();
    match queue.try_put(vec![2]).await {
        Err(PutError::Full(item)) => assert_eq!(item, vec![2]),
        other => panic!("expected Full, got {other:?}"),
    }
    // A delivered item frees its room in the buffer.
    let held = queue.get().await.unwrap();
    assert_eq!(queue.try_put(vec![2]).await.unwrap().get(), 2);
    // A waiting put times out with its item back, after a last try.
    match queue
        .put_until(vec![3], after(Duration::from_millis(120)))
        .await
    {
        Err(PutError::TimedOut(item)) => assert_eq!(item, vec![3]),
        other => panic!("expected TimedOut, got {other:?}"),
    }
    // And it goes in once a get makes room.
    let getter = queue.clone();
    let put = queue.put(vec![3]);
    let room = async {
        sleep(Duration::from_millis(60)).await;
        getter.get().await.unwrap()
    };
    let (id, second) = futures_lite::future::zip(put, room).await;
    assert_eq!(id.unwrap().get(), 3);
    held.succeed().await.unwrap();
    second.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (ledger.accepted, ledger.buffered, ledger.succeeded),
        (4, 2, 2)
    );
    assert!(ledger.is_balanced());
}

/// A reclaimed holder's late resolve returns `Stale` and is not counted.
async fn late_resolve_is_stale(_rt: Rt) {
    let server = server!();
    let a = open(&server, "fenced", redeliver(3)).await;
    let b = open(&server, "fenced", redeliver(3)).await;
    a.try_put(b"job".to_vec()).await.unwrap();
    let first = a.get().await.unwrap();
    assert_eq!(first.attempt(), 1);
    // Not yet expired: nothing to reclaim.
    assert!(matches!(b.try_get().await, Err(TryGetError::Empty)));
    sleep(Duration::from_millis(400)).await;
    let second = b.get().await.unwrap();
    assert_eq!((second.id(), second.attempt()), (first.id(), 2));
    assert!(matches!(
        first.keep_alive().await,
        Err(tally_redis::KeepAliveError::Stale)
    ));
    match first.succeed().await {
        Err(ResolveError::Stale(item)) => assert_eq!(item, b"job"),
        other => panic!("expected Stale, got {other:?}"),
    }
    let status = a.status().await.unwrap();
    assert_eq!((status.ledger.succeeded, status.ledger.in_flight), (0, 1));
    assert_eq!((status.stale, status.redelivered), (1, 1));
    second.reject().await.unwrap();
    let ledger = a.ledger().await.unwrap();
    assert_eq!(
        (ledger.succeeded, ledger.rejected, ledger.in_flight),
        (0, 1, 0)
    );
    assert!(ledger.is_balanced());
}

async fn keep_alive_holds_the_lease(_rt: Rt) {
    let server = server!();
    let long = redeliver(3).lease(Duration::from_millis(500));
    let a = open(&server, "long", long).await;
    let b = open(&server, "long", long).await;
    a.try_put(vec![1]).await.unwrap();
    let job = a.get().await.unwrap();
    for _ in 0..6 {
        sleep(Duration::from_millis(150)).await;
        job.keep_alive().await.unwrap();
    }
    // 900 ms held, almost twice the lease: never reclaimed.
    assert!(matches!(b.try_get().await, Err(TryGetError::Empty)));
    assert_eq!(job.attempt(), 1);
    job.succeed().await.unwrap();
    assert_eq!(b.status().await.unwrap().redelivered, 0);
}

async fn dropped_delivery_is_redelivered(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "drop", redeliver(2)).await;
    queue.try_put(vec![7]).await.unwrap();
    drop(queue.get().await.unwrap());
    queue.maintain_once().await.unwrap();
    let again = queue.get().await.unwrap();
    assert_eq!((again.id().get(), again.attempt()), (0, 2));
    drop(again);
    queue.maintain_once().await.unwrap();
    // Past max_attempts: dead-lettered, counted abandoned, the item kept.
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.abandoned, status.dead_lettered), (1, 1));
    assert!(status.ledger.is_balanced());
    let dead = queue.dead_letters(None, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].job.get(), dead[0].attempt, dead[0].bytes.clone()),
        (0, 2, vec![7])
    );
    assert!(
        dead[0].reason.starts_with("dead letter"),
        "{}",
        dead[0].reason
    );
}

async fn dropped_delivery_is_abandoned(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "drop", options()).await;
    queue.try_put(vec![7]).await.unwrap();
    drop(queue.get().await.unwrap());
    queue.maintain_once().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.abandoned, ledger.in_flight), (1, 0));
    let dead = queue.dead_letters(None, 10).await.unwrap();
    assert_eq!(dead[0].reason, "abandoned: dropped unresolved");
}

/// `Uncertain` policy: a dropped delivery ends uncertain (not abandoned), listed in the
/// uncertain records with a reason that tells it from a handler's own uncertain, and is
/// never delivered again.
/// The in-process queue's journal, on this handle: the same `JobEvent`s for what this
/// handle does, so a `tally_queue::Record` answers by id here too.
async fn journal_sees_this_handles_events(_rt: Rt) {
    use std::sync::Arc;
    use tally_queue::{JobEvent, JobState};

    let server = server!();
    let log = Arc::new(common::EventLog::default());
    let queue = open(&server, "journal", uncertain())
        .await
        .with_journal(Arc::clone(&log));
    let ids: Vec<JobId> = {
        let mut ids = Vec::new();
        for n in 0..5u8 {
            ids.push(queue.try_put(vec![n]).await.unwrap());
        }
        ids
    };
    queue.get().await.unwrap().succeed().await.unwrap();
    queue.get().await.unwrap().reject().await.unwrap();
    drop(queue.get().await.unwrap());
    let retried = queue.get().await.unwrap();
    assert_eq!(retried.retry().await.unwrap(), ids[3]);
    queue.maintain_once().await.unwrap();
    // ids[3] is back in the buffer behind ids[4]; an immediate shutdown returns both.
    let returned: Vec<JobId> = queue
        .shutdown_now()
        .await
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(returned, [ids[4], ids[3]]);

    let events = log.events.lock().unwrap().clone();
    let of =
        |id: JobId| -> Vec<JobEvent> { events.iter().copied().filter(|e| e.id() == id).collect() };
    assert_eq!(
        of(ids[0]),
        [
            JobEvent::Accepted(ids[0]),
            JobEvent::Delivered {
                id: ids[0],
                attempt: 1
            },
            JobEvent::Ended {
                id: ids[0],
                outcome: Outcome::Succeeded
            },
        ]
    );
    assert_eq!(
        of(ids[2]),
        [
            JobEvent::Accepted(ids[2]),
            JobEvent::Delivered {
                id: ids[2],
                attempt: 1
            },
            JobEvent::Abandoned {
                id: ids[2],
                panicking: false
            },
            JobEvent::Ended {
                id: ids[2],
                outcome: Outcome::Uncertain
            },
        ]
    );
    assert_eq!(
        of(ids[3]),
        [
            JobEvent::Accepted(ids[3]),
            JobEvent::Delivered {
                id: ids[3],
                attempt: 1
            },
            JobEvent::Retried(ids[3]),
            JobEvent::Discarded(ids[3]),
        ]
    );
    let record = &log.record;
    assert_eq!(
        record.state(ids[1]),
        Some(JobState::Ended(Outcome::Rejected))
    );
    assert_eq!(record.state(ids[4]), Some(JobState::Discarded));
    assert!(record.pending().is_empty());
    assert_eq!(queue.in_flight_ids(), Some(vec![]));
    assert_eq!(queue.journal_panics(), 0);
    // The ledger agrees with the record, outcome by outcome.
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (
            ledger.succeeded,
            ledger.rejected,
            ledger.uncertain,
            ledger.discarded
        ),
        (1, 1, 1, 2)
    );
}

/// A keyed put repeated with a key the server already accepted returns the same id, and
/// the journal records that acceptance once.
async fn journal_records_a_keyed_repeat_once(_rt: Rt) {
    use std::sync::Arc;
    use tally_queue::JobEvent;

    let server = server!();
    let log = Arc::new(common::EventLog::default());
    let queue = open(&server, "keyed", options())
        .await
        .with_journal(Arc::clone(&log));
    let id = queue.put_keyed("order-7", vec![7]).await.unwrap();
    assert_eq!(queue.put_keyed("order-7", vec![7]).await.unwrap(), id);
    assert_eq!(*log.events.lock().unwrap(), [JobEvent::Accepted(id)]);
    assert_eq!(queue.ledger().await.unwrap().accepted, 1);
}

async fn dropped_delivery_ends_uncertain(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "once", uncertain()).await;
    queue.try_put(b"charge".to_vec()).await.unwrap();
    queue.try_put(b"mail".to_vec()).await.unwrap();
    drop(queue.get().await.unwrap());
    queue.maintain_once().await.unwrap();
    queue.get().await.unwrap().uncertain().await.unwrap();
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.uncertain, status.ledger.abandoned), (2, 0));
    assert_eq!((status.redelivered, status.dead_lettered), (0, 0));
    assert!(status.ledger.is_balanced());
    assert_eq!(status.ledger.unfinished(), 0);
    let records = queue.uncertain(None, 10).await.unwrap();
    let seen: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r.job.get(),
                r.attempt,
                r.reason.as_str(),
                r.bytes.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                0,
                1,
                "abandoned: dropped unresolved, ended uncertain",
                &b"charge"[..]
            ),
            (1, 1, "uncertain", &b"mail"[..]),
        ]
    );
    assert!(queue.dead_letters(None, 10).await.unwrap().is_empty());
    // The policy is a setting of the queue, fixed at creation.
    let other = Queue::open(server.client(), "once", Bytes, options()).await;
    assert!(
        matches!(&other, Err(OpenError::Mismatch { field, .. }) if field == "max_att"),
        "{other:?}"
    );
}

/// `retry`, as in process: the job goes back to the end of the stream under its id and
/// comes back as the next attempt; accepted once, ended once.
async fn retried_job_comes_back_under_its_id(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "again", options()).await;
    let first = queue.try_put(b"flaky".to_vec()).await.unwrap();
    let second = queue.try_put(b"next".to_vec()).await.unwrap();
    let job = queue.get().await.unwrap();
    assert_eq!(job.id(), first);
    assert_eq!(job.retry().await.unwrap(), first);
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (ledger.accepted, ledger.buffered, ledger.in_flight),
        (2, 2, 0)
    );
    // Behind the job that was already buffered.
    let next = queue.get().await.unwrap();
    assert_eq!(next.id(), second);
    next.succeed().await.unwrap();
    let again = queue.get().await.unwrap();
    assert_eq!(
        (again.id(), again.attempt(), again.item().as_slice()),
        (first, 2, &b"flaky"[..])
    );
    again.succeed().await.unwrap();
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.accepted, status.ledger.succeeded), (2, 2));
    assert_eq!((status.redelivered, status.stale), (0, 0));
    assert!(status.ledger.is_balanced());
    assert_eq!(status.ledger.unfinished(), 0);
}

/// A retry counts toward the attempts, as in process: the job comes back as the next
/// attempt, not as attempt 1.
async fn retried_job_keeps_counting_attempts(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "attempts", redeliver(5)).await;
    let id = queue.try_put(b"flaky".to_vec()).await.unwrap();
    for attempt in 1..=2 {
        let job = queue.get().await.unwrap();
        assert_eq!((job.id(), job.attempt()), (id, attempt));
        assert_eq!(job.retry().await.unwrap(), id);
    }
    let third = queue.get().await.unwrap();
    assert_eq!((third.id(), third.attempt()), (id, 3));
    let listed = queue.in_flight().await.unwrap();
    assert_eq!((listed.len(), listed[0].attempt), (1, 3));
    third.succeed().await.unwrap();
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.accepted, status.ledger.succeeded), (1, 1));
    assert!(status.ledger.is_balanced());
}

/// A retry of the last attempt `Redeliver` allows is refused, as in process: the delivery
/// comes back still held, and nothing changed.
async fn retry_of_the_last_attempt_is_refused(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "spent", redeliver(2)).await;
    let id = queue.try_put(vec![5]).await.unwrap();
    queue.get().await.unwrap().retry().await.unwrap();
    let last = queue.get().await.unwrap();
    assert_eq!(last.attempt(), 2);
    let last = match last.retry().await {
        Err(refused @ tally_redis::RetryError::Exhausted(_)) => {
            assert_eq!(
                refused.to_string(),
                "retry refused: the job's last allowed attempt was this one"
            );
            refused.into_delivery().unwrap()
        }
        other => panic!("expected Exhausted, got {other:?}"),
    };
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.buffered, ledger.in_flight), (0, 1));
    assert_eq!((last.id(), last.attempt()), (id, 2));
    last.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.succeeded, ledger.in_flight), (1, 0));
    assert!(ledger.is_balanced());
}

/// A poison job that alternates a retry and a crash (dropped unresolved) reaches the dead
/// letters within `max_attempts` deliveries: every way a delivery comes back counts.
async fn poison_job_alternating_retry_and_crash_is_dead_lettered(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "poison", redeliver(4)).await;
    let id = queue.try_put(b"poison".to_vec()).await.unwrap();
    let mut deliveries = 0u64;
    // Bounded well past max_attempts, so that a job that never dies fails the test.
    while deliveries < 12 {
        let job = match queue.get_until(after(Duration::from_secs(2))).await {
            Ok(job) => job,
            Err(GetError::TimedOut) => break,
            Err(other) => panic!("{other:?}"),
        };
        deliveries += 1;
        assert_eq!((job.id(), job.attempt()), (id, deliveries));
        if deliveries % 2 == 1 {
            // A retry of the last allowed delivery is refused, the delivery handed back.
            if let Err(refused) = job.retry().await {
                drop(
                    refused
                        .into_delivery()
                        .expect("a refused retry hands it back"),
                );
                queue.maintain_once().await.unwrap();
            }
        } else {
            drop(job);
            queue.maintain_once().await.unwrap();
        }
    }
    assert_eq!(
        deliveries, 4,
        "delivered {deliveries} times under redeliver(4)"
    );
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.abandoned, status.dead_lettered), (1, 1));
    assert!(status.ledger.is_balanced());
    let dead = queue.dead_letters(None, 10).await.unwrap();
    assert_eq!((dead[0].job, dead[0].attempt), (id, 4));
}

/// A reclaimed holder's retry is fenced: `Stale`, the item back, nothing changed.
async fn stale_retry_is_refused(_rt: Rt) {
    let server = server!();
    let a = open(&server, "fenced", redeliver(3)).await;
    let b = open(&server, "fenced", redeliver(3)).await;
    a.try_put(b"job".to_vec()).await.unwrap();
    let first = a.get().await.unwrap();
    sleep(Duration::from_millis(400)).await;
    let second = b.get().await.unwrap();
    assert_eq!((second.id(), second.attempt()), (first.id(), 2));
    match first.retry().await {
        Err(tally_redis::RetryError::Stale(item)) => assert_eq!(item, b"job"),
        other => panic!("expected Stale, got {other:?}"),
    }
    let status = a.status().await.unwrap();
    assert_eq!((status.ledger.buffered, status.ledger.in_flight), (0, 1));
    assert_eq!((status.stale, status.redelivered), (1, 1));
    assert!(matches!(b.try_get().await, Err(TryGetError::Empty)));
    second.succeed().await.unwrap();
    let ledger = a.ledger().await.unwrap();
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.in_flight),
        (1, 1, 0)
    );
    assert!(ledger.is_balanced());
}

/// A retry is refused once the queue is shut down (either kind, as in process) or when a
/// bounded buffer is full; the delivery comes back, still held, and resolves.
async fn refused_retry_hands_the_delivery_back(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "full", options().bounded(1)).await;
    queue.try_put(vec![0]).await.unwrap();
    let job = queue.get().await.unwrap();
    queue.try_put(vec![1]).await.unwrap();
    let job = match job.retry().await {
        Err(tally_redis::RetryError::Full(delivery)) => *delivery,
        other => panic!("expected Full, got {other:?}"),
    };
    assert_eq!(queue.ledger().await.unwrap().in_flight, 1);
    job.succeed().await.unwrap();

    let queue = open(&server, "graceful", options()).await;
    queue.try_put(vec![2]).await.unwrap();
    let job = queue.get().await.unwrap();
    queue.shutdown().await.unwrap();
    let job = match job.retry().await {
        Err(tally_redis::RetryError::ShutDown(delivery)) => *delivery,
        other => panic!("expected ShutDown, got {other:?}"),
    };
    assert_eq!(job.item(), &vec![2]);
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.buffered, ledger.in_flight), (0, 1));
    job.reject().await.unwrap();
    assert!(matches!(queue.try_get().await, Err(TryGetError::ShutDown)));
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (ledger.accepted, ledger.rejected, ledger.in_flight),
        (1, 1, 0)
    );

    let queue = open(&server, "now", options()).await;
    queue.try_put(vec![3]).await.unwrap();
    let undelivered = queue.try_put(vec![4]).await.unwrap();
    let job = queue.get().await.unwrap();
    let drained = queue.shutdown_now().await.unwrap();
    assert_eq!(drained.len(), 1);
    assert_eq!(drained[0].0, undelivered);
    let job = match job.retry().await {
        Err(error @ tally_redis::RetryError::ShutDown(_)) => {
            assert_eq!(error.to_string(), "retry refused: the queue is shut down");
            error.into_delivery().unwrap()
        }
        other => panic!("expected ShutDown, got {other:?}"),
    };
    job.uncertain().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (
            ledger.uncertain,
            ledger.discarded,
            ledger.in_flight,
            ledger.buffered
        ),
        (1, 1, 0, 0)
    );
    assert!(ledger.is_balanced());
}

/// A retry whose reply is lost hands the delivery back; the repeat is recognized: the job
/// is in the stream once, delivered once more, accepted once.
async fn retry_after_a_lost_reply_happens_once(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "lossy", options()).await;
    let id = queue.try_put(vec![9]).await.unwrap();
    // Load the script first: an EVALSHA refused with NOSCRIPT would do nothing.
    queue.get().await.unwrap().retry().await.unwrap();
    let job = queue.get().await.unwrap();
    server.pause();
    let resumer = std::thread::spawn({
        let pid = server.pid();
        move || {
            std::thread::sleep(Duration::from_millis(700));
            std::process::Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status()
                .unwrap();
        }
    });
    let delivery = match job.retry().await {
        Err(lost @ tally_redis::RetryError::Redis { .. }) => {
            // The server's error is the source.
            let source = core::error::Error::source(&lost).map(ToString::to_string);
            let tally_redis::RetryError::Redis { delivery, error } = lost else {
                unreachable!()
            };
            assert!(error.is_unknown(), "{error}");
            assert_eq!(source, Some(error.to_string()));
            delivery
        }
        other => panic!("expected a lost reply, got {other:?}"),
    };
    resumer.join().unwrap();
    let buffered = retry(|| queue.ledger()).await.buffered;
    assert_eq!(delivery.retry().await.unwrap(), id);
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
    // The server ran the first retry after the client gave up.
    assert_eq!(buffered, 1);
    // Attempt 3: the repeated retry of attempt 2 happened once.
    let again = queue.get().await.unwrap();
    assert_eq!((again.id(), again.attempt()), (id, 3));
    again.succeed().await.unwrap();
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let status = queue.status().await.unwrap();
    assert_eq!(
        (
            status.ledger.accepted,
            status.ledger.succeeded,
            status.stale
        ),
        (1, 1, 0)
    );
    assert!(status.ledger.is_balanced());
}

async fn join_until_reports_the_ledger(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "join", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    match queue.join_until(after(Duration::from_millis(100))).await {
        Err(JoinError::TimedOut(ledger)) => {
            assert_eq!((ledger.buffered, ledger.unfinished()), (1, 1))
        }
        other => panic!("expected TimedOut, got {other:?}"),
    }
    let joiner = queue.clone();
    let join = joiner.join();
    let work = async {
        sleep(Duration::from_millis(80)).await;
        queue.get().await.unwrap().succeed().await.unwrap();
    };
    let (ledger, ()) = futures_lite::future::zip(join, work).await;
    assert_eq!(ledger.unwrap().succeeded, 1);
}

/// Bad names and options get clear errors before anything is sent.
async fn bad_names_and_options(_rt: Rt) {
    let server = server!();
    for name in ["", "a{b}", "two words", "tab\t", "ü"] {
        match Queue::open(server.client(), name, Bytes, options()).await {
            Err(OpenError::BadName { why, .. }) => assert!(!why.is_empty()),
            other => panic!("{name:?}: expected BadName, got {other:?}"),
        }
    }
    // A lease under 100 ms declares live holders dead on a busy machine.
    let bad = [
        options().bounded(0),
        options().lease(Duration::from_millis(1)),
        options().lease(Duration::from_millis(10)),
        options().lease(Duration::from_millis(99)),
        options().max_item_bytes(0),
    ];
    for options in bad {
        assert!(matches!(
            Queue::open(server.client(), "ok", Bytes, options).await,
            Err(OpenError::BadOption(_))
        ));
    }
    // Zero attempts cannot even be asked for: the policy refuses it, as in process.
    assert!(AbandonPolicy::redeliver(0).is_err());
    // Settings are fixed at creation.
    open(&server, "fixed", options().bounded(5)).await;
    match Queue::open(server.client(), "fixed", Bytes, options().bounded(6)).await {
        Err(error @ OpenError::Mismatch { .. }) => assert_eq!(
            error.to_string(),
            "the queue exists with cap = 5, not 6; settings are fixed at creation"
        ),
        other => panic!("expected Mismatch, got {other:?}"),
    }
    // Nothing was created for the refused names.
    let mut con = server.client().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    assert!(
        keys.iter().all(|key| key.starts_with("{fixed}:")),
        "{keys:?}"
    );
}

/// An item larger than allowed is refused and handed back.
async fn oversized_items(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "sizes", options().max_item_bytes(16)).await;
    match queue.try_put(vec![0; 17]).await {
        Err(PutError::TooLarge { item, size, limit }) => {
            assert_eq!((item.len(), size, limit), (17, 17, 16));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    queue.try_put(vec![0; 16]).await.unwrap();
    assert_eq!(queue.ledger().await.unwrap().accepted, 1);
}

/// An item the codec refuses is handed back with the codec's error, and nothing is put.
#[cfg(feature = "json")]
async fn unencodable_items(_rt: Rt) {
    let server = server!();
    let json = Queue::open(
        server.client(),
        "json",
        tally_redis::Json::<std::collections::HashMap<(u8, u8), u8>>::new(),
        options(),
    )
    .await
    .unwrap();
    let map = std::collections::HashMap::from([((1, 2), 3)]);
    match json.try_put(map).await {
        Err(PutError::Encode { item, error }) => {
            assert_eq!(item.len(), 1);
            assert!(error.message().starts_with("json: "), "{error}");
        }
        other => panic!("expected Encode, got {other:?}"),
    }
    assert_eq!(json.ledger().await.unwrap().accepted, 0);
}

/// Bytes that do not decode are dead-lettered with their bytes, and the
/// getter moves on.
#[cfg(feature = "json")]
async fn undecodable_entries_are_dead_lettered(_rt: Rt) {
    let server = server!();
    let raw = open(&server, "mixed", options()).await;
    let typed = Queue::open(
        server.client(),
        "mixed",
        tally_redis::Json::<u32>::new(),
        options(),
    )
    .await
    .unwrap();
    raw.try_put(b"not json".to_vec()).await.unwrap();
    typed.try_put(5).await.unwrap();
    let job = typed.get().await.unwrap();
    assert_eq!((job.id().get(), *job), (1, 5));
    job.succeed().await.unwrap();
    let dead = typed.dead_letters(None, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].job.get(), dead[0].bytes.as_slice()),
        (0, &b"not json"[..])
    );
    assert!(
        dead[0].reason.starts_with("undecodable: json: "),
        "{}",
        dead[0].reason
    );
    let ledger = typed.ledger().await.unwrap();
    assert_eq!((ledger.abandoned, ledger.succeeded), (1, 1));
    assert!(ledger.is_balanced());
}

/// No server at start.
async fn server_down_at_start(_rt: Rt) {
    let server = server!();
    let client = redis::Client::open(format!(
        "redis+unix://{}",
        server.dir.join("nobody.sock").display()
    ))
    .unwrap();
    match Queue::open(client, "jobs", Bytes, options()).await {
        Err(OpenError::Redis(error @ Error::Unavailable(_))) => {
            assert!(
                error.to_string().starts_with("redis is unavailable: "),
                "{error}"
            );
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

/// After a retry, expired leases count on from the retried attempt: a get's reclaim hands
/// the job out as the next attempt, and the maintenance sweep, or a get's reclaim,
/// dead-letters the last one.
async fn expired_leases_count_on_after_a_retry(_rt: Rt) {
    let server = server!();
    let a = open(&server, "vanish", redeliver(3)).await;
    let b = open(&server, "vanish", redeliver(3)).await;
    let id = a.try_put(vec![1]).await.unwrap();
    a.get().await.unwrap().retry().await.unwrap();
    let second = a.get().await.unwrap();
    assert_eq!(second.attempt(), 2);
    std::mem::forget(second);
    sleep(Duration::from_millis(400)).await;
    let third = b.try_get().await.unwrap();
    assert_eq!((third.id(), third.attempt()), (id, 3));
    std::mem::forget(third);
    sleep(Duration::from_millis(400)).await;
    b.maintain_once().await.unwrap();
    let status = b.status().await.unwrap();
    assert_eq!((status.ledger.abandoned, status.dead_lettered), (1, 1));
    assert!(status.ledger.is_balanced());
    let dead = b.dead_letters(None, 10).await.unwrap();
    assert_eq!((dead[0].job, dead[0].attempt), (id, 3));
    assert!(
        dead[0].reason.starts_with("dead letter"),
        "{}",
        dead[0].reason
    );

    // A get's reclaim of the last attempt dead-letters it too.
    let a = open(&server, "last", redeliver(2)).await;
    let b = open(&server, "last", redeliver(2)).await;
    let id = a.try_put(vec![2]).await.unwrap();
    a.get().await.unwrap().retry().await.unwrap();
    std::mem::forget(a.get().await.unwrap());
    sleep(Duration::from_millis(400)).await;
    assert!(matches!(b.try_get().await, Err(TryGetError::Empty)));
    let status = b.status().await.unwrap();
    assert_eq!((status.ledger.abandoned, status.dead_lettered), (1, 1));
    let dead = b.dead_letters(None, 10).await.unwrap();
    assert_eq!((dead[0].job, dead[0].attempt), (id, 2));
}

/// A holder that vanished without a `Drop` (a crash, here `mem::forget`), under the
/// `Abandon` policy: a get's reclaim and the maintenance sweep both end its job as
/// abandoned, keeping the item; after `shutdown_now` the same ending is "discarded".
async fn expired_leases_under_abandon(_rt: Rt) {
    let server = server!();
    let a = open(&server, "vanish", options()).await;
    let b = open(&server, "vanish", options()).await;
    for n in 0..3u8 {
        a.try_put(vec![n]).await.unwrap();
    }
    std::mem::forget(a.get().await.unwrap());
    std::mem::forget(a.get().await.unwrap());
    sleep(Duration::from_millis(400)).await;
    // The get reclaims both, abandons them, and delivers the third.
    let third = b.try_get().await.unwrap();
    assert_eq!((third.id().get(), third.attempt()), (2, 1));
    let status = b.status().await.unwrap();
    assert_eq!((status.ledger.abandoned, status.dead_lettered), (2, 2));
    assert_eq!(status.redelivered, 0);
    std::mem::forget(third);
    sleep(Duration::from_millis(400)).await;
    b.maintain_once().await.unwrap();
    assert_eq!(b.ledger().await.unwrap().abandoned, 3);
    let dead = b.dead_letters(None, 10).await.unwrap();
    let reasons: Vec<_> = dead
        .iter()
        .map(|r| (r.job.get(), r.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            (0, "abandoned: lease expired"),
            (1, "abandoned: lease expired"),
            (2, "abandoned: lease expired")
        ]
    );
    // Each record names the consumer that held the job, not the one that reclaimed it.
    let holders: Vec<_> = dead.iter().map(|r| r.consumer.as_str()).collect();
    assert_eq!(holders, [a.consumer(), a.consumer(), b.consumer()]);
    // Only the undelivered come back from shutdown_now; a lease that expires later ends
    // as discarded.
    a.try_put(vec![3]).await.unwrap();
    a.try_put(vec![4]).await.unwrap();
    std::mem::forget(a.get().await.unwrap());
    let drained = b.shutdown_now().await.unwrap();
    assert_eq!(drained.len(), 1);
    assert_eq!(drained[0].0.get(), 4);
    assert!(matches!(b.try_get().await, Err(TryGetError::ShutDown)));
    sleep(Duration::from_millis(400)).await;
    b.maintain_once().await.unwrap();
    let status = b.status().await.unwrap();
    assert_eq!((status.ledger.discarded, status.ledger.in_flight), (2, 0));
    assert_eq!(status.state, State::Closed);
    assert!(status.ledger.is_balanced());
    assert_eq!(status.ledger.unfinished(), 0);
    let last = b.dead_letters(None, 10).await.unwrap().pop().unwrap();
    assert_eq!(
        (last.job.get(), last.reason.as_str()),
        (3, "discarded: lease expired after shutdown_now")
    );
}

/// Consumers (one per handle) that hold nothing are removed from the group by the sweep
/// once idle for two leases; one that holds a job is kept.
async fn idle_consumers_are_removed(_rt: Rt) {
    let server = server!();
    let idle = open(&server, "tidy", options()).await;
    let holding = open(&server, "tidy", options()).await;
    let sweeper = open(&server, "tidy", options()).await;
    holding.try_put(vec![0]).await.unwrap();
    holding.try_put(vec![1]).await.unwrap();
    idle.get().await.unwrap().succeed().await.unwrap();
    let job = holding.get().await.unwrap();
    let consumers = || {
        let mut con = server.client().get_connection().unwrap();
        let rows: Vec<redis::Value> = redis::cmd("XINFO")
            .arg("CONSUMERS")
            .arg("{tidy}:s")
            .arg("g")
            .query(&mut con)
            .unwrap();
        rows.len()
    };
    assert_eq!(consumers(), 2);
    sleep(Duration::from_millis(700)).await;
    job.keep_alive().await.unwrap();
    sweeper.maintain_once().await.unwrap();
    assert_eq!(consumers(), 1);
    job.succeed().await.unwrap();
    // The removed consumer comes back with its next read.
    idle.try_put(vec![2]).await.unwrap();
    assert_eq!(idle.get().await.unwrap().succeed().await.unwrap(), vec![2]);
    assert_eq!(consumers(), 2);
}

/// Retries `op` while the server comes back (a dead connection fails once, then the next
/// call dials again), for up to 5 s.
async fn retry<T, F, Fut>(mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: core::future::Future<Output = Result<T, Error>>,
{
    let start = std::time::Instant::now();
    loop {
        match op().await {
            Ok(value) => return value,
            Err(error) if start.elapsed() < Duration::from_secs(5) => {
                let _ = error;
                sleep(Duration::from_millis(20)).await;
            }
            Err(error) => panic!("server did not come back: {error}"),
        }
    }
}

/// `kill -9` of the server and a restart on its AOF. The ledger equals
/// the snapshot from before, and every id ends exactly once afterwards.
async fn server_killed_and_restarted(_rt: Rt) {
    let mut server = server!();
    let long = redeliver(3).lease(Duration::from_secs(10));
    let queue = open(&server, "durable", long).await;
    let total = 40u64;
    for n in 0..total {
        queue.try_put(n.to_le_bytes().to_vec()).await.unwrap();
    }
    let mut ended = BTreeSet::new();
    for n in 0..12 {
        let job = queue.get().await.unwrap();
        ended.insert(job.id().get());
        match n % 3 {
            0 => job.succeed().await.unwrap(),
            1 => job.reject().await.unwrap(),
            _ => job.uncertain().await.unwrap(),
        };
    }
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(queue.get().await.unwrap());
    }
    let before = queue.status().await.unwrap();
    assert_eq!((before.ledger.in_flight, before.ledger.buffered), (5, 23));

    server.kill9();
    assert!(queue.ledger().await.is_err());
    server.restart();
    let after_restart = retry(|| queue.status()).await;
    assert_eq!(after_restart, before);
    // A handle opened after the restart sees the same.
    let other = open(&server, "durable", long).await;
    assert_eq!(other.status().await.unwrap(), before);
    assert_eq!(other.uncertain(None, 100).await.unwrap().len(), 4);

    // The deliveries held across the restart still resolve, once.
    for job in held {
        ended.insert(job.id().get());
        let mut job = job;
        loop {
            match job.succeed().await {
                Ok(_) => break,
                Err(ResolveError::Redis { delivery, .. }) => job = *delivery,
                Err(stale) => panic!("{stale}"),
            }
        }
    }
    queue.shutdown().await.unwrap();
    while let Ok(job) = other.get().await {
        assert!(ended.insert(job.id().get()), "{} ended twice", job.id());
        job.succeed().await.unwrap();
    }
    assert_eq!(ended, ids(0..total));
    let ledger = queue.join().await.unwrap();
    assert_eq!(ledger.accepted, total);
    assert_eq!(ledger.ended(), total);
    assert_eq!((ledger.rejected, ledger.uncertain), (4, 4));
    assert!(ledger.is_balanced());
    assert_eq!(queue.status().await.unwrap().stale, 0);
}

/// The server disappears mid-run. Each call fails with a clear error,
/// items come back, nothing is counted that did not happen; it works again after a
/// restart.
async fn server_disappears_mid_run(_rt: Rt) {
    let mut server = server!();
    let queue = open(&server, "flaky", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    server.kill9();
    for _ in 0..2 {
        match queue.try_put(vec![2]).await {
            Err(error @ (PutError::Failed { .. } | PutError::Unknown { .. })) => {
                let text = error.to_string();
                assert!(
                    text.starts_with("item not accepted: redis is unavailable")
                        || text.starts_with("unknown whether the item was accepted"),
                    "{text}"
                );
                assert_eq!(error.into_inner(), vec![2]);
            }
            other => panic!("expected a transport error, got {other:?}"),
        }
    }
    assert!(matches!(queue.get().await, Err(GetError::Redis(_))));
    assert!(matches!(queue.try_get().await, Err(TryGetError::Redis(_))));
    assert!(queue.join().await.is_err());
    assert!(queue.maintain_once().await.is_err());
    server.restart();
    let ledger = retry(|| queue.ledger()).await;
    assert_eq!((ledger.accepted, ledger.buffered), (1, 1));
    assert_eq!(queue.try_put(vec![3]).await.unwrap().get(), 1);
    assert_eq!(queue.get().await.unwrap().succeed().await.unwrap(), vec![1]);
}

/// A server restarted without its data: a clear error, not a silent
/// fresh queue.
async fn server_lost_its_data(_rt: Rt) {
    let mut server = server!();
    let queue = open(&server, "volatile", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    server.kill9();
    std::fs::remove_dir_all(server.dir.join("appendonlydir")).unwrap();
    server.restart();
    let start = std::time::Instant::now();
    let error = loop {
        match queue.try_put(vec![2]).await {
            Err(PutError::Failed {
                error: error @ Error::Gone,
                item,
            }) => {
                assert_eq!(item, vec![2]);
                break error;
            }
            Err(_) if start.elapsed() < Duration::from_secs(5) => {}
            other => panic!("expected Gone, got {other:?}"),
        }
    };
    assert!(
        error.to_string().contains("lost or rewound its data"),
        "{error}"
    );
    assert!(matches!(queue.ledger().await, Err(Error::Gone)));
}

/// Lost replies never double-count. The server is stopped (SIGSTOP) so a
/// command is received but its reply comes after the client gave up.
async fn lost_replies_never_double_count(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "lossy", options()).await;
    // Load the scripts first: an EVALSHA refused with NOSCRIPT would do nothing.
    queue.try_put(vec![0]).await.unwrap();
    queue.get().await.unwrap().succeed().await.unwrap();
    queue.try_put(vec![1]).await.unwrap();
    let job = queue.get().await.unwrap();

    // A resolve whose reply is lost hands the delivery back; the repeat counts once.
    server.pause();
    let resumer = std::thread::spawn({
        let pid = server.pid();
        move || {
            std::thread::sleep(Duration::from_millis(700));
            std::process::Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status()
                .unwrap();
        }
    });
    let delivery = match job.succeed().await {
        Err(ResolveError::Redis { delivery, error }) => {
            assert!(error.is_unknown(), "{error}");
            delivery
        }
        other => panic!("expected a lost reply, got {other:?}"),
    };
    resumer.join().unwrap();
    let counted_before_repeat = retry(|| queue.ledger()).await.succeeded - 1;
    assert_eq!(delivery.succeed().await.unwrap(), vec![1]);
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.succeeded, status.stale), (2, 0));
    // The server ran the resolve after the client gave up, so the repeat above was
    // recognized as a repeat (not counted again).
    assert_eq!(counted_before_repeat, 1);

    // A plain put whose reply is lost says "unknown" and hands the item back.
    server.pause();
    let outcome = queue.try_put(vec![2]).await;
    server.resume();
    match outcome {
        Err(PutError::Unknown { item, .. }) => assert_eq!(item, vec![2]),
        other => panic!("expected Unknown, got {other:?}"),
    }
    let accepted = retry(|| queue.ledger()).await.accepted;
    // It was accepted after all: "unknown" was the honest answer.
    assert_eq!(accepted, 3);

    // A keyed put tries again through the outage and is accepted exactly once.
    server.pause();
    let resumer = std::thread::spawn({
        let pid = server.pid();
        move || {
            std::thread::sleep(Duration::from_millis(700));
            std::process::Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status()
                .unwrap();
        }
    });
    let id = queue.put_keyed("order-1", vec![3]).await.unwrap();
    resumer.join().unwrap();
    assert_eq!(id.get(), accepted);
    assert_eq!(queue.put_keyed("order-1", vec![3]).await.unwrap(), id);
    assert_eq!(queue.ledger().await.unwrap().accepted, accepted + 1);
}

/// A `shutdown_now` whose reply is lost: the items it moved out wait in the handle's own
/// list, and the next `shutdown_now` returns them; none is lost or returned twice.
async fn shutdown_now_after_a_lost_reply(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "halt", options()).await;
    for n in 0..600u64 {
        queue.try_put(n.to_le_bytes().to_vec()).await.unwrap();
    }
    // Load the script, on another queue of the same server.
    let warm = open(&server, "warm", options()).await;
    assert!(warm.shutdown_now().await.unwrap().is_empty());
    server.pause();
    let lost = queue.shutdown_now().await.unwrap_err();
    server.resume();
    assert!(lost.error.is_unknown(), "{}", lost.error);
    assert!(lost.drained.is_empty());
    // The first step ran after the client gave up: closed, and one chunk taken out for
    // this handle, still in flight: nothing is counted discarded before it is handed back.
    let status = retry(|| queue.status()).await;
    assert_eq!(status.state, State::Closed);
    assert_eq!(status.ledger.discarded, 0);
    assert!(status.ledger.in_flight > 0);
    assert!(status.ledger.is_balanced());
    let drained = queue.shutdown_now().await.unwrap();
    let ids: Vec<u64> = drained.iter().map(|(id, _)| id.get()).collect();
    assert_eq!(ids, (0..600).collect::<Vec<_>>());
    for (id, item) in drained {
        assert_eq!(item.ok().unwrap(), id.get().to_le_bytes());
    }
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.discarded, ledger.buffered), (600, 0));
    assert!(ledger.is_balanced());
    assert!(queue.shutdown_now().await.unwrap().is_empty());
}

/// A get cancelled while the server holds its command (the reply comes after the future
/// is gone) loses nothing: the next get on the handle delivers the entry as the same
/// attempt, with no redelivery.
async fn cancelled_get_loses_nothing(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "cancel", redeliver(3)).await;
    // Load the get script first: an EVALSHA refused with NOSCRIPT would do nothing.
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    queue.try_put(vec![1]).await.unwrap();
    queue.try_put(vec![2]).await.unwrap();
    server.pause();
    let timed_out = futures_lite::future::or(async { Some(queue.get().await) }, async {
        sleep(Duration::from_millis(100)).await;
        None
    })
    .await;
    assert!(timed_out.is_none());
    server.resume();
    sleep(Duration::from_millis(50)).await;
    // The cancelled get's script ran after all: entry 0 sits in this consumer's list.
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.in_flight, ledger.buffered), (1, 1));
    let first = queue.get().await.unwrap();
    assert_eq!((first.id().get(), first.attempt()), (0, 1));
    let second = queue.get().await.unwrap();
    assert_eq!((second.id().get(), second.attempt()), (1, 1));
    first.succeed().await.unwrap();
    second.succeed().await.unwrap();
    let status = queue.status().await.unwrap();
    assert_eq!((status.redelivered, status.ledger.succeeded), (0, 2));
    // And many short deadlines racing gets lose nothing either.
    for n in 0..40u8 {
        queue.try_put(vec![n]).await.unwrap();
    }
    let mut got = BTreeSet::new();
    while got.len() < 40 {
        if let Ok(job) = queue.get_until(after(Duration::from_micros(300))).await {
            assert_eq!(job.attempt(), 1);
            assert!(got.insert(job.id().get()));
            job.succeed().await.unwrap();
        }
    }
    assert_eq!(queue.status().await.unwrap().redelivered, 0);
}

on_both!(
    round_trip,
    bounded_refuses_when_full,
    late_resolve_is_stale,
    keep_alive_holds_the_lease,
    dropped_delivery_is_redelivered,
    dropped_delivery_is_abandoned,
    journal_sees_this_handles_events,
    journal_records_a_keyed_repeat_once,
    dropped_delivery_ends_uncertain,
    retried_job_comes_back_under_its_id,
    retried_job_keeps_counting_attempts,
    retry_of_the_last_attempt_is_refused,
    poison_job_alternating_retry_and_crash_is_dead_lettered,
    stale_retry_is_refused,
    refused_retry_hands_the_delivery_back,
    retry_after_a_lost_reply_happens_once,
    join_until_reports_the_ledger,
    bad_names_and_options,
    oversized_items,
    server_down_at_start,
    server_killed_and_restarted,
    server_disappears_mid_run,
    server_lost_its_data,
    lost_replies_never_double_count,
    cancelled_get_loses_nothing,
    expired_leases_under_abandon,
    expired_leases_count_on_after_a_retry,
    idle_consumers_are_removed,
    shutdown_now_after_a_lost_reply,
);

// The tests that need the `json` codec.
#[cfg(feature = "json")]
on_both!(unencodable_items, undecodable_entries_are_dead_lettered);

fn ids(range: std::ops::Range<u64>) -> BTreeSet<u64> {
    range.collect()
}

mod processes {
    //! Tests with child processes (the test binary in a role, see `common::roles`).

    use std::collections::BTreeMap;

    use super::*;
    use crate::common::roles::outcome_for;
    use crate::common::{wait, Reader};

    const LIMIT: Duration = Duration::from_secs(20);
    /// The lease of the tests that are not about expiry.
    const LONG_LEASE: Duration = Duration::from_secs(5);

    fn long_lease() -> (&'static str, String) {
        ("TALLY_REDIS_LEASE_MS", LONG_LEASE.as_millis().to_string())
    }

    /// A child in `role`, batching: it puts, takes and resolves 16 jobs at a time, and a
    /// holder holds up to 16 (one here, where one is buffered).
    fn child(
        server: &common::Server,
        name: &str,
        role: &str,
        rt: Rt,
        extra: &[(&str, String)],
    ) -> std::process::Child {
        let mut env = extra.to_vec();
        env.push(("TALLY_REDIS_BATCH", "16".to_string()));
        common::child(server, name, role, rt, &env)
    }

    fn env_attempts(n: u32) -> (&'static str, String) {
        ("TALLY_REDIS_MAXATT", n.to_string())
    }

    /// A consumer process killed with SIGKILL mid-job. Its job comes back
    /// as attempt 2 and succeeds; the ledger is balanced; one redelivery. Past
    /// `max_attempts` the job is dead-lettered.
    async fn killed_consumer_job_comes_back(rt: Rt) {
        let server = server!();
        let queue = open(&server, "crash", redeliver(2)).await;
        queue.try_put(b"first".to_vec()).await.unwrap();

        let mut holder = child(&server, "crash", "hold", rt, &[env_attempts(2)]);
        let held = Reader::new(&mut holder).until("HELD", LIMIT);
        assert_eq!(held, ["HELD 0 1"]);
        holder.kill().unwrap();
        holder.wait().unwrap();

        let job = queue
            .get_until(after(Duration::from_secs(5)))
            .await
            .unwrap();
        assert_eq!((job.id().get(), job.attempt()), (0, 2));
        job.succeed().await.unwrap();
        let status = queue.status().await.unwrap();
        assert_eq!(status.redelivered, 1);
        assert_eq!((status.ledger.succeeded, status.ledger.in_flight), (1, 0));
        assert!(status.ledger.is_balanced());

        // Two more holders die on the next job: attempt 1, then attempt 2, the last.
        queue.try_put(b"poison".to_vec()).await.unwrap();
        for attempt in 1..=2 {
            let mut holder = child(&server, "crash", "hold", rt, &[env_attempts(2)]);
            let held = Reader::new(&mut holder).until("HELD", LIMIT);
            assert_eq!(held, [format!("HELD 1 {attempt}")]);
            holder.kill().unwrap();
            holder.wait().unwrap();
        }
        sleep(Duration::from_millis(400)).await;
        queue.maintain_once().await.unwrap();
        assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
        let status = queue.status().await.unwrap();
        assert_eq!((status.ledger.abandoned, status.dead_lettered), (1, 1));
        assert_eq!(status.redelivered, 2);
        assert!(status.ledger.is_balanced());
        assert_eq!(status.ledger.unfinished(), 0);
        let dead = queue.dead_letters(None, 10).await.unwrap();
        assert_eq!(dead.len(), 1);
        assert_eq!((dead[0].job.get(), dead[0].attempt), (1, 2));
        assert_eq!(dead[0].bytes, b"poison");
    }

    /// Under `Uncertain`, a consumer process killed with SIGKILL mid-job: after the lease
    /// its job ends uncertain (by a get's reclaim, and by the maintenance sweep), is
    /// listed in the uncertain records with its reason, and is never delivered again.
    async fn killed_consumer_job_ends_uncertain(rt: Rt) {
        let server = server!();
        let queue = open(&server, "once", uncertain()).await;
        let policy = ("TALLY_REDIS_MAXATT", "uncertain".to_string());
        for (n, item) in [&b"charge"[..], b"refund"].into_iter().enumerate() {
            queue.try_put(item.to_vec()).await.unwrap();
            let mut holder = child(&server, "once", "hold", rt, std::slice::from_ref(&policy));
            let held = Reader::new(&mut holder).until("HELD", LIMIT);
            assert_eq!(held, [format!("HELD {n} 1")]);
            holder.kill().unwrap();
            holder.wait().unwrap();
            assert_eq!(queue.ledger().await.unwrap().in_flight, 1);
            sleep(Duration::from_millis(400)).await;
            if n == 0 {
                // A get reclaims the expired lease: it ends the job, delivers nothing.
                assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
            } else {
                queue.maintain_once().await.unwrap();
            }
            let ledger = queue.ledger().await.unwrap();
            assert_eq!(
                (ledger.uncertain, ledger.abandoned, ledger.in_flight),
                (n as u64 + 1, 0, 0)
            );
        }
        assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
        let status = queue.status().await.unwrap();
        assert_eq!((status.redelivered, status.dead_lettered), (0, 0));
        assert!(status.ledger.is_balanced());
        assert_eq!(status.ledger.unfinished(), 0);
        let records = queue.uncertain(None, 10).await.unwrap();
        let seen: Vec<_> = records
            .iter()
            .map(|r| {
                (
                    r.job.get(),
                    r.attempt,
                    r.reason.as_str(),
                    r.bytes.as_slice(),
                )
            })
            .collect();
        let why = "abandoned: lease expired, ended uncertain";
        assert_eq!(
            seen,
            [(0, 1, why, &b"charge"[..]), (1, 1, why, &b"refund"[..])]
        );
        assert!(queue.dead_letters(None, 10).await.unwrap().is_empty());
        // Shut down: a get says so, nothing came back.
        queue.shutdown().await.unwrap();
        assert!(matches!(queue.try_get().await, Err(TryGetError::ShutDown)));
    }

    /// `shutdown_now` from another process returns exactly the undelivered
    /// items while three consumer processes race it. Three rounds.
    async fn shutdown_now_races_consumer_processes(rt: Rt) {
        let server = server!();
        for round in 0..3 {
            let name = format!("race{round}");
            // Leases long enough that a consumer holding a batch on a loaded host keeps it:
            // an expired one would end abandoned, neither delivered nor drained.
            let queue = open(&server, &name, options().lease(LONG_LEASE)).await;
            let total = 3000u64;
            queue
                .put_many((0..total).map(|n| n.to_le_bytes().to_vec()))
                .await
                .unwrap();
            // The drainer waits, ready, for a line on its stdin.
            let mut drainer = common::child_command(&server, &name, "drainer", rt)
                .env("TALLY_REDIS_BATCH", "16")
                .env(long_lease().0, long_lease().1)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .expect("spawn the drainer");
            let drainer_lines = Reader::new(&mut drainer);
            drainer_lines.until("READY", LIMIT);
            let mut consumers: Vec<_> = (0..3)
                .map(|_| child(&server, &name, "consumer", rt, &[long_lease()]))
                .collect();
            let readers: Vec<_> = consumers.iter_mut().map(Reader::new).collect();
            // Let the consumers get going, then drain under them.
            let started = std::time::Instant::now();
            while queue.ledger().await.unwrap().ended() < 50 {
                assert!(started.elapsed() < LIMIT, "consumers did not start");
                sleep(Duration::from_millis(2)).await;
            }
            {
                use std::io::Write;
                let mut go = drainer.stdin.take().expect("piped stdin");
                writeln!(go, "GO").expect("tell the drainer to go");
            }
            let drained_lines = drainer_lines.until("DONE", LIMIT);
            let mut ended = BTreeSet::new();
            for reader in &readers {
                for line in reader.until("DONE", LIMIT) {
                    if let Some(rest) = line.strip_prefix("END ") {
                        let id: u64 = rest.split(' ').next().unwrap().parse().unwrap();
                        assert!(ended.insert(id), "{id} delivered twice");
                    }
                }
            }
            for consumer in &mut consumers {
                assert!(wait(consumer, LIMIT).success());
            }
            assert!(wait(&mut drainer, LIMIT).success());
            let drained: BTreeSet<u64> = drained_lines
                .iter()
                .filter_map(|line| line.strip_prefix("DRAINED "))
                .map(|id| id.parse().unwrap())
                .collect();
            assert_eq!(
                drained.len() + 1,
                drained_lines.len(),
                "duplicate drained ids"
            );
            assert!(
                ended.is_disjoint(&drained),
                "an item both delivered and drained"
            );
            let all: BTreeSet<u64> = ended.union(&drained).copied().collect();
            let lost: Vec<_> = ids(0..total).difference(&all).copied().collect();
            assert!(lost.is_empty(), "round {round}: lost {lost:?}");
            let ledger = queue.join().await.unwrap();
            assert_eq!(ledger.discarded, drained.len() as u64);
            assert_eq!(
                ledger.succeeded + ledger.rejected + ledger.uncertain,
                ended.len() as u64
            );
            assert!(ledger.is_balanced());
            assert!(
                !drained.is_empty() && !ended.is_empty(),
                "no race: {} drained",
                drained.len()
            );
            eprintln!(
                "round {round}: {} delivered, {} drained",
                ended.len(),
                drained.len()
            );
        }
    }

    /// Two producer and three consumer processes, mixed outcomes.
    async fn two_producers_three_consumers(rt: Rt) {
        // 10,000 jobs through one local server take about 20 s on two busy cores, and the
        // tokio and smol runs share them: a bound far above that.
        const FLEET_LIMIT: Duration = Duration::from_secs(180);
        let server = server!();
        let name = "fleet";
        // Bounded, so producers also wait for room across processes.
        // Leases long enough that a consumer holding a batch on a loaded host keeps it:
        // this test is about ids and counts across processes, not expiry.
        let queue = open(&server, name, options().bounded(100).lease(LONG_LEASE)).await;
        let per_producer = 5000u64;
        let cap = ("TALLY_REDIS_CAP", "100".to_string());
        let count = ("TALLY_REDIS_COUNT", per_producer.to_string());
        let mut consumers: Vec<_> = (0..3)
            .map(|_| child(&server, name, "consumer", rt, &[cap.clone(), long_lease()]))
            .collect();
        let consumer_readers: Vec<_> = consumers.iter_mut().map(Reader::new).collect();
        let mut producers: Vec<_> = (0..2)
            .map(|_| {
                let env = [count.clone(), cap.clone(), long_lease()];
                child(&server, name, "producer", rt, &env)
            })
            .collect();
        let producer_readers: Vec<_> = producers.iter_mut().map(Reader::new).collect();
        let mut put = BTreeSet::new();
        for reader in &producer_readers {
            for line in reader.until("DONE", FLEET_LIMIT) {
                if let Some(id) = line.strip_prefix("PUT ") {
                    assert!(put.insert(id.parse::<u64>().unwrap()), "id issued twice");
                }
            }
        }
        let total = 2 * per_producer;
        assert_eq!(put.len() as u64, total);
        assert_eq!(put.last(), Some(&(total - 1)), "ids are not contiguous");
        for producer in &mut producers {
            assert!(wait(producer, FLEET_LIMIT).success());
        }
        queue.shutdown().await.unwrap();
        let mut ended = BTreeMap::new();
        let mut per_outcome = BTreeMap::new();
        for reader in &consumer_readers {
            for line in reader.until("DONE", FLEET_LIMIT) {
                let Some(rest) = line.strip_prefix("END ") else {
                    continue;
                };
                let mut parts = rest.split(' ');
                let id: u64 = parts.next().unwrap().parse().unwrap();
                let outcome = parts.next().unwrap().to_string();
                assert_eq!(outcome, outcome_for(id).to_string());
                assert!(
                    ended.insert(id, outcome.clone()).is_none(),
                    "{id} ended twice"
                );
                *per_outcome.entry(outcome).or_insert(0u64) += 1;
            }
        }
        for consumer in &mut consumers {
            assert!(wait(consumer, FLEET_LIMIT).success());
        }
        assert_eq!(ended.len() as u64, total);
        assert_eq!(ended.keys().last(), Some(&(total - 1)));
        let ledger = queue.join().await.unwrap();
        assert_eq!(ledger.accepted, total);
        assert_eq!(ledger.succeeded, per_outcome["succeeded"]);
        assert_eq!(ledger.rejected, per_outcome["rejected"]);
        assert_eq!(ledger.uncertain, per_outcome["uncertain"]);
        assert_eq!(
            (ledger.rejected, ledger.uncertain),
            (total / 10, total / 10)
        );
        assert!(ledger.is_balanced());
        assert_eq!(
            queue.uncertain(None, 10_000).await.unwrap().len() as u64,
            ledger.uncertain
        );
    }

    /// Graceful drain across processes, including a job whose holder died
    /// after the shutdown: it was accepted, so it is still delivered.
    async fn graceful_drain_delivers_redeliveries(rt: Rt) {
        let server = server!();
        let name = "drain";
        let queue = open(&server, name, redeliver(3)).await;
        for n in 0..20u8 {
            queue.try_put(vec![n]).await.unwrap();
        }
        let mut holder = child(&server, name, "hold", rt, &[env_attempts(3)]);
        assert_eq!(Reader::new(&mut holder).until("HELD", LIMIT), ["HELD 0 1"]);
        queue.shutdown().await.unwrap();
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert!(queue.try_put(vec![99]).await.unwrap_err().is_shut_down());
        let mut consumer = child(&server, name, "consumer", rt, &[env_attempts(3)]);
        let lines = Reader::new(&mut consumer).until("DONE", LIMIT);
        assert!(wait(&mut consumer, LIMIT).success());
        assert_eq!(lines.len(), 21);
        assert!(
            lines.contains(&format!("END 0 {} 2", outcome_for(0))),
            "{lines:?}"
        );
        let ledger = queue.join().await.unwrap();
        assert_eq!((ledger.accepted, ledger.ended()), (20, 20));
        assert!(ledger.is_balanced());
    }

    /// `NoWorkers` once the only worker process dies.
    async fn no_workers_when_the_worker_process_dies(rt: Rt) {
        let server = server!();
        let name = "staffed";
        let lease = ("TALLY_REDIS_LEASE_MS", "500".to_string());
        let queue = open(&server, name, options().lease(Duration::from_millis(500))).await;
        let mut worker = child(&server, name, "worker", rt, &[lease]);
        assert_eq!(Reader::new(&mut worker).until("READY", LIMIT), ["READY"]);
        // The heartbeat keeps it alive past its lease.
        sleep(Duration::from_millis(800)).await;
        assert_eq!(queue.status().await.unwrap().workers, 1);
        queue.try_put(vec![1]).await.unwrap();
        worker.kill().unwrap();
        worker.wait().unwrap();
        sleep(Duration::from_millis(700)).await;
        match queue.try_put(vec![2]).await {
            Err(PutError::NoWorkers(item)) => assert_eq!(item, vec![2]),
            other => panic!("expected NoWorkers, got {other:?}"),
        }
        assert_eq!(queue.ledger().await.unwrap().accepted, 1);
        let worker = queue.worker().await.unwrap();
        assert_eq!(queue.try_put(vec![2]).await.unwrap().get(), 1);
        worker.retire().await.unwrap();
        assert!(matches!(
            queue.try_put(vec![3]).await,
            Err(PutError::NoWorkers(_))
        ));
        assert_eq!(queue.status().await.unwrap().workers, 0);
    }

    on_both!(
        killed_consumer_job_comes_back,
        killed_consumer_job_ends_uncertain,
        shutdown_now_races_consumer_processes,
        two_producers_three_consumers,
        graceful_drain_delivers_redeliveries,
        no_workers_when_the_worker_process_dies,
    );
}

/// The maintenance future always sleeps between passes. With the server down and a
/// dropped delivery waiting, another task on the same single thread keeps running; it
/// would starve if a failing pass looped without yielding.
fn maintenance_yields_during_an_outage(rt: Rt) {
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Some(mut server) = common::Server::start() else {
            done.send(()).ok();
            return;
        };
        let body = async move {
            let queue = open(&server, "outage", options()).await;
            queue.try_put(vec![1]).await.unwrap();
            drop(queue.get().await.unwrap());
            server.kill9();
            let background = queue.clone();
            let maintain = async move {
                background.maintain(common::sleep).await;
            };
            let ticks = async {
                for _ in 0..20 {
                    sleep(Duration::from_millis(10)).await;
                }
            };
            futures_lite::future::or(ticks, maintain).await;
        };
        match rt {
            Rt::Tokio => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(body),
            Rt::Smol => smol::block_on(body),
        }
        done.send(()).ok();
    });
    match finished.recv_timeout(Duration::from_secs(10)) {
        Ok(()) => {}
        Err(_) => panic!("the other task did not run: the maintenance future never yielded"),
    }
}

#[test]
fn maintenance_yields_during_an_outage_tokio() {
    maintenance_yields_during_an_outage(Rt::Tokio);
}

#[test]
fn maintenance_yields_during_an_outage_smol() {
    maintenance_yields_during_an_outage(Rt::Smol);
}

/// With the queue's keys deleted, a maintenance future with work it cannot do backs off
/// instead of sending command after command.
async fn maintenance_backs_off_when_keys_are_gone(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "deleted", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    drop(queue.get().await.unwrap());
    let _: () = server.query(&redis::cmd("FLUSHALL"));
    let before = server.commands_run();
    futures_lite::future::or(
        async {
            queue.maintain(common::sleep).await;
        },
        sleep(Duration::from_secs(1)),
    )
    .await;
    let sent = server.commands_run() - before;
    assert!(sent < 200, "{sent} commands in one second");
}

/// A get whose command stalls on its connection and lands after later gets (sent on a
/// fresh connection) ran: it finds its own token void and hands nothing out, so the job
/// it would have taken is delivered normally, not lost to an expired lease.
async fn late_get_on_a_stalled_connection_loses_nothing(_rt: Rt) {
    let server = server!();
    let proxy = common::proxy::Proxy::start(&server.dir, &server.sock);
    let queue = Queue::open(proxy.client(), "late", Bytes, options())
        .await
        .unwrap();
    // Load the scripts: an EVALSHA refused with NOSCRIPT would do nothing.
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    queue.try_put(vec![0]).await.unwrap();
    queue.get().await.unwrap().succeed().await.unwrap();
    proxy.stall();
    match queue.try_get().await {
        Err(TryGetError::Redis(error)) => assert!(error.is_unknown(), "{error}"),
        other => panic!("expected a lost reply, got {other:?}"),
    }
    // On a fresh connection: nothing to hand out yet.
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    queue.try_put(vec![1]).await.unwrap();
    // The stalled get lands now.
    proxy.release();
    sleep(Duration::from_millis(50)).await;
    let job = queue
        .get_until(after(Duration::from_secs(2)))
        .await
        .expect("the job is delivered");
    assert_eq!((job.id().get(), job.attempt()), (1, 1));
    job.succeed().await.unwrap();
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.abandoned, status.redelivered), (0, 0));
    assert!(status.ledger.is_balanced());
}

/// A plain get (no look for expired leases: the lease is long) that stalls and lands
/// after later gets took its job from the stream: the handle's next get delivers that
/// job (same attempt) long before its lease could expire, and nothing is counted twice.
async fn late_plain_get_is_delivered_by_the_next_get(_rt: Rt) {
    let server = server!();
    let proxy = common::proxy::Proxy::start(&server.dir, &server.sock);
    let long = options().lease(Duration::from_secs(30));
    let queue = Queue::open(proxy.client(), "lateplain", Bytes, long)
        .await
        .unwrap();
    // The first get looks for expired leases (a script); the next ones read plainly.
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    queue.try_put(vec![0]).await.unwrap();
    queue.get().await.unwrap().succeed().await.unwrap();
    proxy.stall();
    match queue.try_get().await {
        Err(TryGetError::Redis(error)) => assert!(error.is_unknown(), "{error}"),
        other => panic!("expected a lost reply, got {other:?}"),
    }
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    queue.try_put(vec![1]).await.unwrap();
    proxy.release();
    sleep(Duration::from_millis(100)).await;
    // The stalled read took the job: it is this consumer's, and no delivery holds it.
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.buffered, ledger.in_flight), (0, 1));
    let job = queue
        .get_until(after(Duration::from_secs(2)))
        .await
        .expect("the job is delivered by the next get");
    assert_eq!((job.id().get(), job.attempt()), (1, 1));
    job.succeed().await.unwrap();
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.succeeded, status.redelivered), (2, 0));
    assert!(status.ledger.is_balanced());
}

/// `in_flight` lists every job in flight with its holder, attempt and lease age, and
/// tells a holder that is seen (it looked at the server's clock within a lease) from one
/// that is not; a renewal shows at once.
async fn in_flight_lists_holders_and_says_who_is_alive(_rt: Rt) {
    let server = server!();
    let a = open(&server, "held", redeliver(3)).await;
    let b = open(&server, "held", redeliver(3)).await;
    a.put_many(vec![vec![0], vec![1], vec![2]]).await.unwrap();
    let mine = a.get_many(2).await.unwrap();
    let theirs = b.get().await.unwrap();
    assert!(a
        .in_flight()
        .await
        .unwrap()
        .iter()
        .all(|job| job.holder_alive));
    sleep(Duration::from_millis(400)).await;
    // A maintenance pass looks at the clock: `a` is seen, `b` (which did nothing for more
    // than a lease) is not; with redelivery on, the pass leaves the expired leases to gets.
    a.maintain_once().await.unwrap();
    let mut listed = a.in_flight().await.unwrap();
    listed.sort_by_key(|job| job.id);
    let seen: Vec<(u64, u64, &str, bool)> = listed
        .iter()
        .map(|job| {
            let id = job.id.expect("a job of ours").get();
            (id, job.attempt, job.holder.as_str(), job.holder_alive)
        })
        .collect();
    assert_eq!(
        seen,
        [
            (0, 1, a.consumer(), true),
            (1, 1, a.consumer(), true),
            (2, 1, b.consumer(), false),
        ]
    );
    assert!(listed
        .iter()
        .all(|job| job.lease_age >= Duration::from_millis(400)));
    // A renewal looks at the clock too, and restarts the lease.
    theirs.keep_alive().await.unwrap();
    let renewed = b.in_flight().await.unwrap();
    let job = renewed
        .iter()
        .find(|job| job.holder == b.consumer())
        .unwrap();
    assert!(job.holder_alive);
    assert!(
        job.lease_age < Duration::from_millis(300),
        "{:?}",
        job.lease_age
    );
    for job in mine {
        job.succeed().await.unwrap();
    }
    theirs.succeed().await.unwrap();
    assert!(a.in_flight().await.unwrap().is_empty());
}

/// Delayed puts on the server's clock: counted buffered (and toward the capacity) at once,
/// delivered only once due, under the ids they drew in order with other puts; one due in
/// the past goes out at once.
async fn delayed_puts_wait_until_due(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "later", options().bounded(3)).await;
    let start = std::time::Instant::now();
    let later = queue
        .put_after(vec![0], Duration::from_millis(400))
        .await
        .unwrap();
    let now = queue.try_put(vec![1]).await.unwrap();
    let past = std::time::SystemTime::now() - Duration::from_secs(60);
    let overdue = queue.put_at(vec![2], past).await.unwrap();
    assert_eq!((later.get(), now.get(), overdue.get()), (0, 1, 2));
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.buffered), (3, 3));
    // The delayed job counts toward the capacity.
    assert!(queue.try_put(vec![3]).await.unwrap_err().is_full());
    let mut got = Vec::new();
    for _ in 0..2 {
        let job = queue.try_get().await.unwrap();
        got.push(job.id().get());
        job.succeed().await.unwrap();
    }
    got.sort_unstable();
    assert_eq!(got, [1, 2]);
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let job = queue
        .get_until(after(Duration::from_secs(3)))
        .await
        .unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "{:?}",
        start.elapsed()
    );
    assert_eq!((job.id(), job.attempt(), job.to_vec()), (later, 1, vec![0]));
    job.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.succeeded, ledger.buffered), (3, 0));
    assert!(ledger.is_balanced());
}

/// Delayed batches: one script each, the ids contiguous and in order with other puts,
/// counted buffered at once, refused whole (items back) when they do not fit, and
/// delivered once due.
async fn delayed_batches_wait_until_due(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "later-many", options().bounded(5)).await;
    let start = std::time::Instant::now();
    let later = queue
        .put_many_after([vec![0], vec![1], vec![2]], Duration::from_millis(400))
        .await
        .unwrap();
    let now = queue.try_put(vec![3]).await.unwrap();
    assert_eq!(
        later.iter().map(|id| id.get()).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(now.get(), 3);
    match queue
        .put_many_after([vec![4], vec![5]], Duration::from_millis(1))
        .await
    {
        Err(PutError::Full(back)) => assert_eq!(back, [vec![4], vec![5]]),
        other => panic!("{other:?}"),
    }
    assert!(queue
        .put_many_after(Vec::new(), Duration::ZERO)
        .await
        .unwrap()
        .is_empty());
    let past = std::time::SystemTime::now() - Duration::from_secs(60);
    let overdue = queue.put_many_at([vec![6]], past).await.unwrap();
    assert_eq!(overdue[0].get(), 4);
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.buffered), (5, 5));
    let mut first = Vec::new();
    for _ in 0..2 {
        let job = queue.try_get().await.unwrap();
        first.push(job.id().get());
        job.succeed().await.unwrap();
    }
    first.sort_unstable();
    assert_eq!(first, [3, 4]);
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let mut got = Vec::new();
    while got.len() < 3 {
        let job = queue
            .get_until(after(Duration::from_secs(3)))
            .await
            .unwrap();
        got.push((job.id().get(), job.to_vec()));
        job.succeed().await.unwrap();
    }
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "{:?}",
        start.elapsed()
    );
    got.sort_unstable();
    assert_eq!(got, [(0, vec![0]), (1, vec![1]), (2, vec![2])]);
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.succeeded, ledger.buffered), (5, 0));
    assert!(ledger.is_balanced());
}

/// Keyed delayed puts share the keys of `put_keyed`: the first put with a key is accepted
/// (delayed or not), every later one returns its id and adds nothing, whatever its delay.
async fn keyed_delayed_puts_are_accepted_once(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "later-keyed", options()).await;
    let start = std::time::Instant::now();
    let ms = Duration::from_millis;
    let first = queue.put_keyed_after("a", vec![1], ms(300)).await.unwrap();
    assert_eq!(
        queue.put_keyed_after("a", vec![9], ms(1)).await.unwrap(),
        first
    );
    assert_eq!(queue.put_keyed("a", vec![9]).await.unwrap(), first);
    let now = queue.put_keyed("b", vec![2]).await.unwrap();
    assert_eq!(
        queue.put_keyed_after("b", vec![9], ms(1)).await.unwrap(),
        now
    );
    let past = std::time::SystemTime::now() - Duration::from_secs(60);
    let overdue = queue.put_keyed_at("c", vec![3], past).await.unwrap();
    assert_eq!(
        queue.put_keyed_at("c", vec![9], past).await.unwrap(),
        overdue
    );
    assert_eq!((first.get(), now.get(), overdue.get()), (0, 1, 2));
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.buffered), (3, 3));
    let mut got = Vec::new();
    for _ in 0..2 {
        let job = queue.try_get().await.unwrap();
        got.push((job.id().get(), job.to_vec()));
        job.succeed().await.unwrap();
    }
    got.sort_unstable();
    assert_eq!(got, [(1, vec![2]), (2, vec![3])]);
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let job = queue
        .get_until(after(Duration::from_secs(3)))
        .await
        .unwrap();
    assert!(start.elapsed() >= ms(300), "{:?}", start.elapsed());
    assert_eq!((job.id(), job.to_vec()), (first, vec![1]));
    job.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.buffered),
        (3, 3, 0)
    );
    assert!(ledger.is_balanced());
}

/// A keyed delayed put whose reply is lost tries again through the outage and is accepted
/// exactly once.
async fn keyed_delayed_put_after_a_lost_reply_is_accepted_once(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "later-lossy", options()).await;
    // Load the script first: an EVALSHA refused with NOSCRIPT would do nothing.
    let hour = Duration::from_secs(3600);
    let first = queue.put_keyed_after("x", vec![0], hour).await.unwrap();
    server.pause();
    let resumer = std::thread::spawn({
        let pid = server.pid();
        move || {
            std::thread::sleep(Duration::from_millis(700));
            std::process::Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status()
                .unwrap();
        }
    });
    let id = queue.put_keyed_after("y", vec![1], hour).await.unwrap();
    resumer.join().unwrap();
    assert_eq!(id.get(), first.get() + 1);
    assert_eq!(queue.put_keyed_after("y", vec![1], hour).await.unwrap(), id);
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.buffered), (2, 2));
}

/// A retry after a delay: fenced as a retry, the job waits (counted buffered, not in
/// flight) until the delay has passed, then comes back under its id.
async fn retry_after_waits_its_delay(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "backoff", options()).await;
    let id = queue.try_put(vec![7]).await.unwrap();
    let job = queue.get().await.unwrap();
    let start = std::time::Instant::now();
    assert_eq!(
        job.retry_after(Duration::from_millis(300)).await.unwrap(),
        id
    );
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let again = queue
        .get_until(after(Duration::from_secs(3)))
        .await
        .unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );
    assert_eq!((again.id(), again.to_vec()), (id, vec![7]));
    again.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
    assert!(ledger.is_balanced());
}

/// `retry_backoff`: each retry waits the policy's delay for the attempt that failed, which
/// grows since the attempts keep counting across retries.
async fn retry_backoff_grows_with_the_attempts(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "backoff", redeliver(5)).await;
    let id = queue.try_put(vec![3]).await.unwrap();
    let ms = Duration::from_millis;
    let backoff = Backoff::exponential(ms(150), ms(1_000));
    let mut job = queue.get().await.unwrap();
    for attempt in 1..=2u64 {
        assert_eq!((job.id(), job.attempt()), (id, attempt));
        let start = std::time::Instant::now();
        assert_eq!(job.retry_backoff(&backoff).await.unwrap(), id);
        let ledger = queue.ledger().await.unwrap();
        assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
        job = queue
            .get_until(after(Duration::from_secs(3)))
            .await
            .unwrap();
        let (waited, delay) = (start.elapsed(), backoff.delay(attempt as u32));
        assert!(waited >= delay, "attempt {attempt}: {waited:?} < {delay:?}");
    }
    assert_eq!((job.id(), job.attempt()), (id, 3));
    job.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
    assert!(ledger.is_balanced());
}

/// A redelivery backoff: a job whose holder vanished (here `mem::forget`) waits the
/// policy's delay for the attempt that failed among the delayed jobs once its lease is
/// found expired, by a get or by a maintenance pass: counted buffered and redelivered, no
/// longer in flight, then delivered again as the next attempt, whose delay is longer.
async fn expired_lease_waits_its_redelivery_backoff(_rt: Rt) {
    let server = server!();
    let ms = Duration::from_millis;
    let backoff = Backoff::exponential(ms(250), ms(10_000));
    let queue = open(
        &server,
        "lease-backoff",
        redeliver(3).redelivery_backoff(backoff),
    )
    .await;
    let id = queue.try_put(vec![5]).await.unwrap();
    std::mem::forget(queue.get().await.unwrap());
    sleep(ms(400)).await;
    // Found by a get: not handed out, waiting.
    let start = std::time::Instant::now();
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let status = queue.status().await.unwrap();
    assert_eq!(
        (
            status.ledger.buffered,
            status.ledger.in_flight,
            status.redelivered
        ),
        (1, 0, 1)
    );
    assert!(queue.in_flight().await.unwrap().is_empty());
    let second = queue
        .get_until(after(Duration::from_secs(5)))
        .await
        .unwrap();
    let waited = start.elapsed();
    assert!(waited >= ms(250), "{waited:?}");
    assert_eq!((second.id(), second.attempt()), (id, 2));
    std::mem::forget(second);
    sleep(ms(400)).await;
    // Found by a maintenance pass: attempt 2 failed, so 500 ms.
    let start = std::time::Instant::now();
    queue.maintain_once().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
    let third = queue
        .get_until(after(Duration::from_secs(5)))
        .await
        .unwrap();
    let waited = start.elapsed();
    assert!(waited >= ms(500), "{waited:?}");
    assert_eq!(
        (third.id(), third.attempt(), third.to_vec()),
        (id, 3, vec![5])
    );
    third.succeed().await.unwrap();
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.succeeded, status.redelivered), (1, 2));
    assert!(status.ledger.is_balanced());
}

/// A delivery dropped unresolved waits its redelivery backoff too; one whose delay has not
/// passed is handed back by `shutdown_now` with the rest, once.
async fn redelivery_backoff_after_a_drop_and_shutdown_now(_rt: Rt) {
    let server = server!();
    let ms = Duration::from_millis;
    let backoff = Backoff::fixed(ms(300));
    let queue = open(
        &server,
        "drop-backoff",
        redeliver(3).redelivery_backoff(backoff),
    )
    .await;
    let id = queue.try_put(vec![1]).await.unwrap();
    drop(queue.get().await.unwrap());
    let start = std::time::Instant::now();
    queue.maintain_once().await.unwrap();
    let again = queue
        .get_until(after(Duration::from_secs(5)))
        .await
        .unwrap();
    assert!(start.elapsed() >= ms(300), "{:?}", start.elapsed());
    assert_eq!((again.id(), again.attempt()), (id, 2));
    drop(again);
    queue.maintain_once().await.unwrap();
    // Whether this pass or a get found it, it waits.
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    assert!(queue.in_flight().await.unwrap().is_empty());
    queue.try_put(vec![2]).await.unwrap();
    let drained = queue.shutdown_now().await.expect("every item back");
    let mut back: Vec<(u64, Vec<u8>)> = drained
        .into_iter()
        .map(|(id, item)| (id.get(), item.ok().unwrap()))
        .collect();
    back.sort_unstable();
    assert_eq!(back, [(0, vec![1]), (1, vec![2])]);
    let status = queue.status().await.unwrap();
    assert_eq!(
        (
            status.ledger.discarded,
            status.ledger.buffered,
            status.redelivered
        ),
        (2, 0, 2)
    );
    assert!(status.ledger.is_balanced());
}

/// The redelivery backoff is stored with the queue: it needs the `Redeliver` policy, and
/// a later open with another one (or none) is refused, naming it.
async fn redelivery_backoff_is_fixed_at_creation(_rt: Rt) {
    let server = server!();
    let ms = Duration::from_millis;
    let fixed = Backoff::fixed(ms(500));
    let error = Queue::open(
        server.client(),
        "fixed",
        Bytes,
        options().redelivery_backoff(fixed),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, OpenError::BadOption(_)), "{error}");
    let _queue = open(&server, "fixed", redeliver(3).redelivery_backoff(fixed)).await;
    let _same = open(&server, "fixed", redeliver(3).redelivery_backoff(fixed)).await;
    for other in [
        redeliver(3),
        redeliver(3).redelivery_backoff(fixed.with_jitter(Jitter::Full)),
    ] {
        match Queue::open(server.client(), "fixed", Bytes, other).await {
            Err(OpenError::Mismatch { field, .. }) => assert_eq!(field, "backoff"),
            other => panic!("{other:?}"),
        }
    }
    let error = Queue::open(server.client(), "fixed", Bytes, redeliver(3))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("backoff = n 0000000000000000 500000000, not none"),
        "{error}"
    );
}

/// A stored redelivery backoff that this crate did not write is `Error::Foreign` naming
/// the meta, for the get and the maintenance pass that would redeliver, before they change
/// anything.
async fn a_foreign_redelivery_backoff_changes_nothing(_rt: Rt) {
    let server = server!();
    let backoff = Backoff::fixed(Duration::from_millis(300));
    let queue = open(&server, "bo", redeliver(3).redelivery_backoff(backoff)).await;
    queue.try_put(vec![1]).await.unwrap();
    std::mem::forget(queue.get().await.unwrap());
    let stored: String = server.query(redis::cmd("HGET").arg("{bo}:meta").arg("backoff"));
    let _: () = server.query(
        redis::cmd("HSET")
            .arg("{bo}:meta")
            .arg("backoff")
            .arg("n 12 x"),
    );
    sleep(Duration::from_millis(400)).await;
    let foreign = |error: &Error| matches!(error, Error::Foreign { key, .. } if key == "{bo}:meta");
    match queue.try_get().await {
        Err(TryGetError::Redis(error)) => assert!(foreign(&error), "get: {error:?}"),
        other => panic!("get: {other:?}"),
    }
    match queue.maintain_once().await {
        Err(error) => assert!(foreign(&error), "maintain: {error:?}"),
        Ok(()) => panic!("maintain: ok"),
    }
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.in_flight, status.redelivered), (1, 0));
    let _: () = server.query(
        redis::cmd("HSET")
            .arg("{bo}:meta")
            .arg("backoff")
            .arg(&stored),
    );
    queue.maintain_once().await.unwrap();
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.buffered, status.redelivered), (1, 1));
}

/// The server draws a redelivery delay exactly as `Backoff::delay_for` does in process
/// (rounded up to whole milliseconds, as `retry_backoff` sends it), for every jitter, over
/// seeds, ids and attempts that exercise every limb of its 64-bit arithmetic.
async fn the_server_draws_the_backoffs_delays(_rt: Rt) {
    let server = server!();
    let mut source = String::from("#!lua flags=allow-oom\n");
    source.push_str(include_str!("../src/server/lua/queue/prelude.lua"));
    source.push('\n');
    source.push_str(include_str!("../src/server/lua/queue/rare.lua"));
    source.push_str("\nlocal out = {}\nfor i = 3, #ARGV, 2 do\n  out[#out + 1] = rare().backoff_ms(ARGV[2], tonumber(ARGV[i]), tonumber(ARGV[i + 1]))\nend\nreturn out\n");
    let script = redis::Script::new(&source);
    let ms = Duration::from_millis;
    let policies = [
        Backoff::fixed(ms(1_000)),
        Backoff::exponential(Duration::from_nanos(1_234_567), ms(90_000)).with_jitter(Jitter::Full),
        Backoff::exponential(ms(3), Duration::from_secs(86_400 * 100)).with_jitter(Jitter::Equal),
        Backoff::fixed(Duration::from_nanos(999_999_999_999)).with_jitter(Jitter::Full),
        Backoff::fixed(Duration::ZERO).with_jitter(Jitter::Equal),
    ];
    let seeds = [
        0,
        1,
        0xFFFF_FFFF_FFFF_FFFF,
        0x9E37_79B9_7F4A_7C15,
        12_345_678_901_234_567,
    ];
    let ids = [
        0u64,
        1,
        2,
        17,
        65_535,
        65_536,
        1 << 32,
        (1 << 40) + 12_345,
        (1 << 52) - 1,
    ];
    let mut connection = server.client().get_connection().unwrap();
    let mut checked = 0;
    for (n, policy) in policies.into_iter().enumerate() {
        for (m, seed) in seeds.into_iter().enumerate() {
            let policy = policy.with_seed(seed);
            // The stored form, as the crate writes it at creation.
            let name = format!("draw-{n}-{m}");
            let options = redeliver(100).redelivery_backoff(policy);
            drop(open(&server, &name, options).await);
            let stored: String = server.query(
                redis::cmd("HGET")
                    .arg(format!("{{{name}}}:meta"))
                    .arg("backoff"),
            );
            let mut invocation = script.key("{t}:s");
            invocation
                .key("{t}:meta")
                .key("{t}:ledger")
                .arg("{t}")
                .arg(&stored);
            let mut wanted = Vec::new();
            for id in ids {
                for attempt in [1u32, 2, 3, 9, 31, 32, 33, 34, 40] {
                    invocation.arg(id).arg(attempt);
                    let delay = policy.delay_for(attempt, id);
                    let up = u128::from(!delay.subsec_nanos().is_multiple_of(1_000_000));
                    wanted.push((delay.as_millis() + up) as u64);
                }
            }
            let drawn: Vec<u64> = invocation.invoke(&mut connection).unwrap();
            assert_eq!(drawn, wanted, "{policy:?} stored as {stored}");
            checked += drawn.len();
        }
    }
    assert_eq!(checked, 5 * 5 * 9 * 9);
}

/// A key of another type at the delayed jobs' keys (`{q}:later`, `{q}:later:items`) is
/// `Error::Foreign` naming it, for every call that reads them, and changes nothing: once
/// it is gone the queue carries on with its ledger exact.
async fn a_foreign_key_at_the_delayed_jobs_is_foreign(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "fl", options().bounded(4)).await;
    queue.try_put(vec![1]).await.unwrap();
    let foreign = |error: &Error, key: &str| matches!(error, Error::Foreign { key: named, .. } if named == key);
    let _: () = server.query(redis::cmd("SET").arg("{fl}:later").arg("x"));
    match queue.ledger().await {
        Err(error) => assert!(foreign(&error, "{fl}:later"), "ledger: {error:?}"),
        Ok(ledger) => panic!("ledger: {ledger}"),
    }
    match queue.try_put(vec![2]).await {
        Err(PutError::Failed { error, .. }) => {
            assert!(foreign(&error, "{fl}:later"), "put: {error:?}")
        }
        other => panic!("put: {other:?}"),
    }
    match queue.try_get().await {
        Err(TryGetError::Redis(error)) => assert!(foreign(&error, "{fl}:later"), "get: {error:?}"),
        other => panic!("get: {other:?}"),
    }
    // A retry reads them too (bounded: to count what is buffered).
    let _: () = server.query(redis::cmd("DEL").arg("{fl}:later"));
    let job = queue.try_get().await.unwrap();
    let _: () = server.query(redis::cmd("SET").arg("{fl}:later").arg("x"));
    let job = match job.retry().await {
        Err(tally_redis::RetryError::Redis { error, delivery }) => {
            assert!(foreign(&error, "{fl}:later"), "retry: {error:?}");
            delivery
        }
        other => panic!("retry: {other:?}"),
    };
    let _: () = server.query(redis::cmd("DEL").arg("{fl}:later"));
    // A due delayed job whose payload's hash was replaced.
    let past = std::time::SystemTime::now() - Duration::from_secs(60);
    let delayed = queue.put_at(vec![3], past).await.unwrap();
    let _: () = server.query(
        redis::cmd("RENAME")
            .arg("{fl}:later:items")
            .arg("{fl}:aside"),
    );
    let _: () = server.query(redis::cmd("SET").arg("{fl}:later:items").arg("x"));
    match queue.try_get().await {
        Err(TryGetError::Redis(error)) => {
            assert!(foreign(&error, "{fl}:later:items"), "get: {error:?}")
        }
        other => panic!("get: {other:?}"),
    }
    let _: () = server.query(redis::cmd("DEL").arg("{fl}:later:items"));
    let _: () = server.query(
        redis::cmd("RENAME")
            .arg("{fl}:aside")
            .arg("{fl}:later:items"),
    );
    let again = queue.try_get().await.unwrap();
    assert_eq!((again.id(), again.to_vec()), (delayed, vec![3]));
    assert_eq!(job.succeed().await.unwrap(), vec![1]);
    again.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.buffered),
        (2, 2, 0)
    );
    assert!(ledger.is_balanced());
}

/// Delayed jobs and shutdowns: a graceful one drains only once the delayed job was
/// delivered and ended; `shutdown_now` hands delayed jobs back with the rest, each once.
async fn delayed_jobs_and_shutdowns(_rt: Rt) {
    let server = server!();
    let graceful = open(&server, "drain-later", options()).await;
    graceful
        .put_after(vec![1], Duration::from_millis(200))
        .await
        .unwrap();
    graceful.shutdown().await.unwrap();
    assert_eq!(graceful.status().await.unwrap().state, State::Draining);
    let job = graceful
        .get_until(after(Duration::from_secs(3)))
        .await
        .unwrap();
    job.succeed().await.unwrap();
    assert!(matches!(graceful.get().await, Err(GetError::ShutDown)));
    assert_eq!(graceful.status().await.unwrap().state, State::Closed);

    let now = open(&server, "drop-later", options()).await;
    let hour = Duration::from_secs(3600);
    for n in 0..3u8 {
        now.put_after(vec![n], hour).await.unwrap();
    }
    now.try_put(vec![3]).await.unwrap();
    let drained = now.shutdown_now().await.expect("every item back");
    let mut back: Vec<(u64, Vec<u8>)> = drained
        .into_iter()
        .map(|(id, item)| (id.get(), item.ok().unwrap()))
        .collect();
    back.sort_unstable();
    assert_eq!(
        back,
        (0..4u8)
            .map(|n| (u64::from(n), vec![n]))
            .collect::<Vec<_>>()
    );
    let ledger = now.ledger().await.unwrap();
    assert_eq!((ledger.discarded, ledger.buffered), (4, 0));
    assert!(ledger.is_balanced());
}

/// A get dropped at any of its awaits (the plain read, the script after it when it found
/// nothing, the dial) loses no job and hands none out twice: what a dropped read took is
/// delivered by a later get of the handle, at attempt 1, long before a lease (30 s here)
/// could expire.
async fn gets_dropped_at_any_await_lose_nothing(_rt: Rt) {
    let server = server!();
    let queue = open(
        &server,
        "dropgets",
        options().lease(Duration::from_secs(30)),
    )
    .await;
    let total = 30u8;
    queue
        .put_many((0..total).map(|n| vec![n]).collect::<Vec<_>>())
        .await
        .unwrap();
    let mut seen = BTreeSet::new();
    for polls in 0..24usize {
        let mut victim = Box::pin(queue.try_get_many(2));
        let mut done = None;
        for _ in 0..polls {
            if let Some(result) = futures_lite::future::poll_once(victim.as_mut()).await {
                done = Some(result);
                break;
            }
        }
        drop(victim);
        if let Some(Ok(jobs)) = done {
            take(&mut seen, jobs).await;
        }
    }
    let limit = std::time::Instant::now() + Duration::from_secs(5);
    while seen.len() < usize::from(total) {
        assert!(std::time::Instant::now() < limit, "lost: {seen:?}");
        match queue.try_get_many(10).await {
            Ok(jobs) => take(&mut seen, jobs).await,
            Err(TryGetError::Empty) => sleep(Duration::from_millis(10)).await,
            Err(other) => panic!("{other}"),
        }
    }
    let status = queue.status().await.unwrap();
    assert_eq!(
        (
            status.ledger.succeeded,
            status.ledger.abandoned,
            status.redelivered
        ),
        (u64::from(total), 0, 0)
    );
    assert!(status.ledger.is_balanced());
}

/// Succeeds each job, checking it is a first attempt and new to `seen`.
async fn take(seen: &mut BTreeSet<u64>, jobs: Vec<tally_redis::Delivery<Bytes>>) {
    for job in jobs {
        assert_eq!(job.attempt(), 1);
        assert!(seen.insert(job.id().get()), "{} handed out twice", job.id());
        job.succeed().await.unwrap();
    }
}

/// `shutdown_now` moves items out in steps bounded by bytes: items of the largest
/// default size all come back within a short response timeout.
async fn shutdown_now_returns_large_items(_rt: Rt) {
    let server = server!();
    let quick = options().response_timeout(Duration::from_millis(300));
    let queue = open(&server, "large", quick).await;
    let total = 24u8;
    for n in 0..total {
        queue.try_put(vec![n; 1 << 20]).await.unwrap();
    }
    let drained = queue.shutdown_now().await.expect("every item back");
    let ids: Vec<u64> = drained.iter().map(|(id, _)| id.get()).collect();
    assert_eq!(ids, (0..u64::from(total)).collect::<Vec<_>>());
    for (id, item) in drained {
        assert_eq!(item.ok().unwrap(), vec![id.get() as u8; 1 << 20]);
    }
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.discarded, ledger.buffered), (u64::from(total), 0));
    assert!(ledger.is_balanced());
}

/// A key of the queue holding another type (written by something else): the resolve is
/// refused before it changes anything, and says which key; once repaired, it counts.
async fn a_foreign_key_type_changes_nothing(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "foreign", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    let job = queue.get().await.unwrap();
    let _: () = server.query(redis::cmd("SET").arg("{foreign}:ends").arg("x"));
    let job = match job.succeed().await {
        Err(refused @ ResolveError::Redis { .. }) => {
            let source = core::error::Error::source(&refused).map(ToString::to_string);
            let ResolveError::Redis { delivery, error } = refused else {
                unreachable!()
            };
            assert_eq!(source, Some(error.to_string()));
            assert!(error.to_string().contains("{foreign}:ends"), "{error}");
            assert!(!error.is_unknown());
            delivery
        }
        other => panic!("expected a refusal, got {other:?}"),
    };
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.succeeded, ledger.in_flight), (0, 1));
    let _: () = server.query(redis::cmd("DEL").arg("{foreign}:ends"));
    assert_eq!(job.succeed().await.unwrap(), vec![1]);
    assert_eq!(queue.ledger().await.unwrap().succeeded, 1);
}

/// An entry added to the stream by something else is dead-lettered by the get that
/// meets it, with its fields; it is not counted in the ledger (it was never accepted),
/// so the ledger stays exact, and gets go on.
async fn foreign_entries_are_dead_lettered(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "strangers", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    let _: String = server.query(
        redis::cmd("XADD")
            .arg("{strangers}:s")
            .arg("*")
            .arg("hello")
            .arg("world"),
    );
    queue.try_put(vec![2]).await.unwrap();
    let first = queue.get().await.unwrap();
    let second = queue.get().await.unwrap();
    assert_eq!((first.id().get(), second.id().get()), (0, 1));
    first.succeed().await.unwrap();
    second.succeed().await.unwrap();
    let status = queue.status().await.unwrap();
    assert_eq!(status.foreign, 1);
    assert_eq!((status.ledger.accepted, status.ledger.succeeded), (2, 2));
    assert_eq!((status.ledger.buffered, status.ledger.abandoned), (0, 0));
    assert!(status.ledger.is_balanced());
    let dead = queue.dead_letters(None, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert!(dead[0].is_foreign());
    assert!(
        dead[0].reason.starts_with("foreign entry"),
        "{}",
        dead[0].reason
    );
    assert!(dead[0].reason.contains("hello"), "{}", dead[0].reason);
}

/// A step of the server's clock by an hour (as NTP makes) never takes a job from a
/// holder that renews its lease: the handles see the step against their monotonic
/// clocks and move the leases with it.
async fn clock_step_forward_spares_a_renewing_holder(_rt: Rt) {
    let server = clock_server!();
    let holder = open(&server, "clock", redeliver(3)).await;
    let other = open(&server, "clock", redeliver(3)).await;
    holder.try_put(vec![1]).await.unwrap();
    let job = holder.get().await.unwrap();
    // Both handles watch the clock for a while before the step.
    for _ in 0..4 {
        assert!(matches!(other.try_get().await, Err(TryGetError::Empty)));
        other.maintain_once().await.unwrap();
        job.keep_alive().await.unwrap();
        sleep(Duration::from_millis(80)).await;
    }
    server.step_clock(3_600_000);
    for _ in 0..8 {
        assert!(matches!(other.try_get().await, Err(TryGetError::Empty)));
        other.maintain_once().await.unwrap();
        job.keep_alive().await.expect("the lease is still held");
        sleep(Duration::from_millis(80)).await;
    }
    assert_eq!(job.succeed().await.unwrap(), vec![1]);
    let status = other.status().await.unwrap();
    assert_eq!((status.redelivered, status.stale), (0, 0));
    assert!(status.clock_steps >= 1);
}

/// A step of the server's clock back by an hour does not hide a dead holder for the
/// hour: its lease is counted from the step, and the job comes back within a few leases.
async fn clock_step_back_still_reclaims_a_dead_holder(_rt: Rt) {
    let server = clock_server!();
    let dead = open(&server, "clock", redeliver(3)).await;
    let other = open(&server, "clock", redeliver(3)).await;
    dead.try_put(vec![1]).await.unwrap();
    std::mem::forget(dead.get().await.unwrap());
    for _ in 0..3 {
        assert!(matches!(other.try_get().await, Err(TryGetError::Empty)));
        other.maintain_once().await.unwrap();
        sleep(Duration::from_millis(50)).await;
    }
    server.step_clock(-3_600_000);
    let job = other
        .get_until(after(Duration::from_secs(3)))
        .await
        .expect("the dead holder's job comes back");
    assert_eq!((job.id().get(), job.attempt()), (0, 2));
    job.succeed().await.unwrap();
}

/// The repeat window is a setting of the queue, fixed at creation like the lease: a
/// handle cannot shorten how long another handle's keyed puts are remembered.
async fn repeat_window_is_fixed_at_creation(_rt: Rt) {
    let server = server!();
    open(
        &server,
        "window",
        options().repeat_window(Duration::from_secs(60)),
    )
    .await;
    let short = options().repeat_window(Duration::from_secs(1));
    match Queue::open(server.client(), "window", Bytes, short).await {
        Err(OpenError::Mismatch {
            field,
            stored,
            given,
        }) => {
            assert_eq!(
                (field.as_str(), stored.as_str(), given.as_str()),
                ("repeat_ms", "60000", "1000")
            )
        }
        other => panic!("expected Mismatch, got {other:?}"),
    }
}

/// A late resolve after the reclaimer already resolved the job is refused, and counted
/// as stale.
async fn late_resolve_after_the_reclaimer_ended_it_is_counted(_rt: Rt) {
    let server = server!();
    let a = open(&server, "late", redeliver(3)).await;
    let b = open(&server, "late", redeliver(3)).await;
    a.try_put(vec![1]).await.unwrap();
    let first = a.get().await.unwrap();
    sleep(Duration::from_millis(400)).await;
    let second = b.get().await.unwrap();
    assert_eq!(second.attempt(), 2);
    second.succeed().await.unwrap();
    assert!(matches!(first.succeed().await, Err(ResolveError::Stale(_))));
    let status = a.status().await.unwrap();
    assert_eq!((status.stale, status.ledger.succeeded), (1, 1));
}

/// A finished job leaves nothing per job on the server: only the queue's own keys
/// remain (a keyed put's key stays for the repeat window, by design).
async fn finished_jobs_leave_no_keys_behind(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "tidy", options()).await;
    for n in 0..50u8 {
        queue.try_put(vec![n]).await.unwrap();
    }
    for _ in 0..50 {
        queue.get().await.unwrap().succeed().await.unwrap();
    }
    let keys: Vec<String> = server.query(redis::cmd("KEYS").arg("*"));
    assert!(keys.len() <= 8, "{} keys: {keys:?}", keys.len());
}

/// Once a graceful shutdown has drained (every accepted job ended), the queue is closed:
/// nothing more can come.
async fn full_drain_closes_the_queue(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "drained", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    queue.shutdown().await.unwrap();
    assert_eq!(queue.status().await.unwrap().state, State::Draining);
    queue.get().await.unwrap().succeed().await.unwrap();
    assert!(matches!(queue.get().await, Err(GetError::ShutDown)));
    assert_eq!(queue.status().await.unwrap().state, State::Closed);
}

/// `put_many` is one batch: contiguous ids in the order of the items, the ledger moved
/// once, refused whole (items back) when it does not fit or the queue is shut down; keyed,
/// a known key (or one repeated in the batch) gets its job's id and adds nothing.
async fn put_many_is_one_contiguous_batch(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "many", options().bounded(10)).await;
    let ids = |range: std::ops::Range<u64>| range.map(JobId::from_raw).collect::<Vec<_>>();
    assert!(queue.put_many(Vec::new()).await.unwrap().is_empty());
    assert_eq!(
        queue.put_many((0..4u8).map(|n| vec![n])).await.unwrap(),
        ids(0..4)
    );
    assert_eq!(
        queue.try_put_many((4..8u8).map(|n| vec![n])).await.unwrap(),
        ids(4..8)
    );
    match queue.try_put_many((8..12u8).map(|n| vec![n])).await {
        Err(PutError::Full(items)) => {
            assert_eq!(items, (8..12u8).map(|n| vec![n]).collect::<Vec<_>>())
        }
        other => panic!("expected Full, got {other:?}"),
    }
    // Larger than the capacity: it could never fit, so a waiting put does not wait.
    assert!(
        matches!(queue.put_many((0..11u8).map(|n| vec![n])).await, Err(PutError::Full(items)) if items.len() == 11)
    );
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.buffered), (8, 8));
    let taken = queue.get_many(8).await.unwrap();
    let items: Vec<_> = taken.iter().map(|job| job.item().clone()).collect();
    assert_eq!(items, (0..8u8).map(|n| vec![n]).collect::<Vec<_>>());
    for job in taken {
        job.succeed().await.unwrap();
    }

    let keyed = open(&server, "keyed", options()).await;
    let first = keyed
        .put_many_keyed([("a", vec![1]), ("b", vec![2])])
        .await
        .unwrap();
    assert_eq!(first, ids(0..2));
    let second = keyed
        .put_many_keyed([
            ("b", vec![2]),
            ("c", vec![3]),
            ("c", vec![3]),
            ("d", vec![4]),
        ])
        .await
        .unwrap();
    assert_eq!(second, [1, 2, 2, 3].map(JobId::from_raw));
    assert_eq!(keyed.ledger().await.unwrap().accepted, 4);
    keyed.shutdown().await.unwrap();
    // Shut down: the known keys would add nothing, but a new one is refused, all back.
    match keyed.put_many_keyed([("a", vec![1]), ("e", vec![5])]).await {
        Err(PutError::ShutDown(items)) => assert_eq!(items, [vec![1], vec![5]]),
        other => panic!("expected ShutDown, got {other:?}"),
    }
    assert_eq!(
        keyed.put_many_keyed([("a", vec![1])]).await.unwrap(),
        ids(0..1)
    );
}

/// `get_many` holds up to n leases, each its own fenced delivery with its own attempt;
/// `resolve_and_get` resolves a batch and takes the next in one call; a dropped one ends
/// by the policy, and stale ones in a batch are refused one by one.
async fn get_many_and_resolve_many(_rt: Rt) {
    let server = server!();
    let a = open(&server, "batches", redeliver(3)).await;
    let b = open(&server, "batches", redeliver(3)).await;
    a.put_many((0..10u8).map(|n| vec![n])).await.unwrap();
    let jobs = a.get_many(4).await.unwrap();
    let seen: Vec<_> = jobs.iter().map(|j| (j.id().get(), j.attempt())).collect();
    assert_eq!(seen, [(0, 1), (1, 1), (2, 1), (3, 1)]);
    let mut jobs = jobs.into_iter();
    let (j0, j1, j2, j3) = (
        jobs.next().unwrap(),
        jobs.next().unwrap(),
        jobs.next().unwrap(),
        jobs.next().unwrap(),
    );
    drop(j3);
    let (answers, next) = a
        .resolve_and_get(
            vec![
                (j0, Outcome::Succeeded),
                (j1, Outcome::Rejected),
                (j2, Outcome::Uncertain),
            ],
            3,
        )
        .await
        .unwrap();
    let items: Vec<_> = answers.into_iter().map(|answer| answer.unwrap()).collect();
    assert_eq!(items, [vec![0], vec![1], vec![2]]);
    let next_ids: Vec<_> = next.iter().map(|j| j.id().get()).collect();
    assert_eq!(next_ids, [4, 5, 6]);
    // The dropped one is released for the next reclaim (Redeliver).
    a.maintain_once().await.unwrap();
    // Their leases run out: another handle reclaims them (attempt 2), then takes new ones.
    sleep(Duration::from_millis(400)).await;
    let taken = b.get_many(10).await.unwrap();
    let seen: Vec<_> = taken.iter().map(|j| (j.id().get(), j.attempt())).collect();
    assert_eq!(
        seen,
        [(3, 2), (4, 2), (5, 2), (6, 2), (7, 1), (8, 1), (9, 1)]
    );
    let late = a
        .resolve_many(next.into_iter().map(|j| (j, Outcome::Succeeded)).collect())
        .await
        .unwrap();
    assert!(late
        .iter()
        .all(|answer| matches!(answer, Err(ResolveError::Stale(_)))));
    let done = b
        .resolve_many(taken.into_iter().map(|j| (j, Outcome::Succeeded)).collect())
        .await
        .unwrap();
    assert!(done.iter().all(Result::is_ok));
    let status = a.status().await.unwrap();
    assert_eq!(status.stale, 3);
    assert_eq!(status.redelivered, 4);
    let ledger = status.ledger;
    assert_eq!(
        (ledger.succeeded, ledger.rejected, ledger.uncertain),
        (8, 1, 1)
    );
    assert!(ledger.is_balanced());
    assert_eq!(ledger.unfinished(), 0);
}

/// A batch of resolves whose reply is lost comes back whole; resolved again, each counts
/// once.
async fn resolve_many_after_a_lost_reply_counts_once(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "lossy-many", options()).await;
    // Load the scripts first: an EVALSHA refused with NOSCRIPT would do nothing.
    queue.put_many([vec![0]]).await.unwrap();
    let warm = queue.get_many(1).await.unwrap();
    queue
        .resolve_many(warm.into_iter().map(|j| (j, Outcome::Succeeded)).collect())
        .await
        .unwrap();
    queue.put_many((1..6u8).map(|n| vec![n])).await.unwrap();
    let jobs = queue.get_many(5).await.unwrap();
    server.pause();
    let lost = queue
        .resolve_many(jobs.into_iter().map(|j| (j, Outcome::Succeeded)).collect())
        .await
        .unwrap_err();
    server.resume();
    assert!(lost.error.is_unknown(), "{}", lost.error);
    assert_eq!(lost.resolves.len(), 5);
    let again = retry_until_answered(&queue, lost.resolves).await;
    assert!(again.iter().all(Result::is_ok));
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.succeeded, status.stale), (6, 0));
    assert!(status.ledger.is_balanced());
}

/// A batch resolve whose deliveries were handed out before another handle reclaimed one
/// of them is fenced entry by entry: the reclaimed one is stale, the one still held counts
/// (its lowest entry is still this handle's, at its attempt).
async fn batch_resolve_after_a_reclaim_is_fenced_per_entry(_rt: Rt) {
    let server = server!();
    let lease = redeliver(3).lease(Duration::from_millis(500));
    let a = open(&server, "fence-epoch", lease).await;
    let b = open(&server, "fence-epoch", lease).await;
    a.put_many([vec![0], vec![1]]).await.unwrap();
    let jobs = a.get_many(2).await.unwrap();
    let seen: Vec<_> = jobs.iter().map(|j| (j.id().get(), j.attempt())).collect();
    assert_eq!(seen, [(0, 1), (1, 1)]);
    let mut jobs = jobs.into_iter();
    let (kept, lapsed) = (jobs.next().unwrap(), jobs.next().unwrap());
    // The first is kept alive, the second's lease runs out.
    for _ in 0..5 {
        sleep(Duration::from_millis(150)).await;
        kept.keep_alive().await.unwrap();
    }
    let taken = b.get_many(2).await.unwrap();
    let seen: Vec<_> = taken.iter().map(|j| (j.id().get(), j.attempt())).collect();
    assert_eq!(seen, [(1, 2)]);
    let answers = a
        .resolve_many(vec![
            (kept, Outcome::Succeeded),
            (lapsed, Outcome::Succeeded),
        ])
        .await
        .unwrap();
    assert!(matches!(answers[0], Ok(ref item) if *item == [0]));
    assert!(matches!(answers[1], Err(ResolveError::Stale(_))));
    let status = a.status().await.unwrap();
    assert_eq!(
        (
            status.ledger.succeeded,
            status.stale,
            status.ledger.in_flight
        ),
        (1, 1, 1)
    );
    let done = b
        .resolve_many(taken.into_iter().map(|j| (j, Outcome::Succeeded)).collect())
        .await
        .unwrap();
    assert!(done.iter().all(Result::is_ok));
    let ledger = a.ledger().await.unwrap();
    assert_eq!(ledger.succeeded, 2);
    assert!(ledger.is_balanced());
}

async fn retry_until_answered(
    queue: &Queue<Bytes>,
    mut resolves: Vec<(tally_redis::Delivery<Bytes>, Outcome)>,
) -> Vec<Result<Vec<u8>, ResolveError<Bytes>>> {
    let start = std::time::Instant::now();
    loop {
        match queue.resolve_many(resolves).await {
            Ok(answers) => return answers,
            Err(error) if start.elapsed() < Duration::from_secs(5) => {
                resolves = error.resolves;
                sleep(Duration::from_millis(20)).await;
            }
            Err(error) => panic!("{error}"),
        }
    }
}

/// A server that lost its script cache (`SCRIPT FLUSH`, as after a restart) is sent each
/// script again: puts, gets and batch resolves go on, each counted once.
async fn scripts_are_loaded_again_after_a_script_flush(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "flushed", options()).await;
    queue.put_many(vec![vec![1], vec![2]]).await.unwrap();
    let _: () = server.query(redis::cmd("SCRIPT").arg("FLUSH"));
    queue.put_many(vec![vec![3], vec![4]]).await.unwrap();
    let jobs = queue.try_get_many(4).await.unwrap();
    assert_eq!(jobs.len(), 4);
    let _: () = server.query(redis::cmd("SCRIPT").arg("FLUSH"));
    let done = jobs
        .into_iter()
        .map(|job| (job, Outcome::Succeeded))
        .collect();
    let answers = queue.resolve_many(done).await.unwrap();
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.succeeded), (4, 4));
    assert!(ledger.is_balanced());
}

on_both!(
    put_many_is_one_contiguous_batch,
    get_many_and_resolve_many,
    batch_resolve_after_a_reclaim_is_fenced_per_entry,
    resolve_many_after_a_lost_reply_counts_once,
    maintenance_backs_off_when_keys_are_gone,
    scripts_are_loaded_again_after_a_script_flush,
    late_get_on_a_stalled_connection_loses_nothing,
    late_plain_get_is_delivered_by_the_next_get,
    in_flight_lists_holders_and_says_who_is_alive,
    delayed_puts_wait_until_due,
    delayed_batches_wait_until_due,
    keyed_delayed_puts_are_accepted_once,
    keyed_delayed_put_after_a_lost_reply_is_accepted_once,
    retry_after_waits_its_delay,
    retry_backoff_grows_with_the_attempts,
    delayed_jobs_and_shutdowns,
    expired_lease_waits_its_redelivery_backoff,
    a_foreign_key_at_the_delayed_jobs_is_foreign,
    redelivery_backoff_after_a_drop_and_shutdown_now,
    redelivery_backoff_is_fixed_at_creation,
    a_foreign_redelivery_backoff_changes_nothing,
    the_server_draws_the_backoffs_delays,
    gets_dropped_at_any_await_lose_nothing,
    shutdown_now_returns_large_items,
    a_foreign_key_type_changes_nothing,
    foreign_entries_are_dead_lettered,
    clock_step_forward_spares_a_renewing_holder,
    clock_step_back_still_reclaims_a_dead_holder,
    repeat_window_is_fixed_at_creation,
    late_resolve_after_the_reclaimer_ended_it_is_counted,
    finished_jobs_leave_no_keys_behind,
    full_drain_closes_the_queue,
);
