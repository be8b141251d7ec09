//! `TrackingLatch` and `Counter`: names, handles, deadlines that name the missing, and
//! diagnostics.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::thread;
use std::time::Duration;

use common::{poll_once, sleep};
use futures_lite::future::block_on;
use tally_latch::{Failure, NameError, StillPending, TrackingLatch};

fn names(pending: &StillPending) -> Vec<String> {
    pending.names().iter().map(|n| n.to_string()).collect()
}

/// Seed: "stall one shard; the timeout error lists exactly that shard."
#[test]
fn seed_stalled_shard_is_named_by_the_timeout() {
    let latch =
        Arc::new(TrackingLatch::<String>::new_failable(["shard-1", "shard-2", "shard-3"]).unwrap());
    let shards: Vec<_> = ["shard-1", "shard-3"]
        .into_iter()
        .map(|name| {
            let counter = latch.counter_owned(name).unwrap();
            thread::spawn(move || counter.report())
        })
        .collect();
    // shard-2 stalls: its handle is held, never reported, never dropped during the wait.
    let stalled = latch.counter("shard-2").unwrap();
    shards.into_iter().for_each(|s| assert!(s.join().unwrap()));

    let error = block_on(latch.wait_until(sleep(Duration::from_millis(20)))).unwrap_err();
    assert_eq!(names(&error), ["shard-2"]);
    assert_eq!(error.to_string(), "timed out waiting for: shard-2");
    let error = latch
        .wait_blocking_timeout(Duration::from_millis(5))
        .unwrap_err();
    assert_eq!(names(&error), ["shard-2"]);
    // The timeouts changed nothing.
    assert_eq!(latch.count(), 1);
    assert_eq!(latch.pending(), ["shard-2"]);
    assert!(stalled.report());
    assert_eq!(block_on(latch.wait()), Ok(()));
}

/// Seed: "delay one component's readiness; the health endpoint stays not-ready until it
/// reports, and a startup timeout names it."
#[test]
fn seed_readiness_gating() {
    let ready = Arc::new(
        TrackingLatch::<String>::new_failable(["consumer", "cache-warmer", "http"]).unwrap(),
    );
    let http = ready.counter_owned("http").unwrap();
    ready.counter("consumer").unwrap().report();
    ready.count_down_for("cache-warmer").unwrap();
    // The health check is the non-blocking view of the latch.
    assert!(!ready.is_open());
    let error = block_on(ready.wait_until(sleep(Duration::from_millis(10)))).unwrap_err();
    assert_eq!(names(&error), ["http"]);
    let component = thread::spawn(move || {
        thread::sleep(Duration::from_millis(10));
        http.report();
    });
    assert_eq!(
        block_on(ready.wait_until(sleep(Duration::from_secs(60)))),
        Ok(Ok(()))
    );
    assert!(ready.is_open());
    component.join().unwrap();
}

/// Seed: "Count mismatches. A latch for 3 with 4 counters opens early; one with 2 counters
/// never opens. Named counters catch both."
#[test]
fn seed_count_mismatches_are_caught_by_names() {
    let latch = TrackingLatch::new(["a", "b", "c"]).unwrap();
    for name in ["a", "b", "d"] {
        let _ = latch.count_down_for(name);
    }
    assert_eq!(
        latch.count_down_for("d"),
        Err(NameError::Unknown("d".into()))
    );
    assert_eq!(latch.pending(), ["c"]);
    assert!(!latch.is_open());
}

#[test]
fn duplicate_names_are_refused_at_construction() {
    assert_eq!(
        TrackingLatch::new(["x", "y", "x"]).unwrap_err(),
        NameError::Duplicate("x".into())
    );
    let owned: Vec<String> = vec!["p".into(), "q".into(), "q".into()];
    assert_eq!(
        TrackingLatch::new(owned).unwrap_err().to_string(),
        "duplicate counter name `q`"
    );
}

#[test]
fn duplicate_reports_are_harmless() {
    let latch = TrackingLatch::new(["a", "b"]).unwrap();
    assert_eq!(latch.count_down_for("a"), Ok(true));
    assert_eq!(latch.count_down_for("a"), Ok(false));
    assert_eq!(latch.count(), 1);
    assert_eq!(latch.pending(), ["b"]);
}

#[test]
fn unknown_name_counts_nothing() {
    let latch = TrackingLatch::new(["a"]).unwrap();
    assert_eq!(
        latch.count_down_for("b").unwrap_err().to_string(),
        "unknown counter name `b`"
    );
    assert_eq!(
        latch.counter("b").unwrap_err(),
        NameError::Unknown("b".into())
    );
    assert_eq!(latch.count(), 1);
}

#[test]
fn one_handle_per_name() {
    let latch = TrackingLatch::new(["a", "b"]).unwrap();
    let a = latch.counter("a").unwrap();
    assert_eq!(
        latch.counter("a").unwrap_err(),
        NameError::Claimed("a".into())
    );
    latch.count_down_for("b").unwrap();
    assert_eq!(
        latch.counter("b").unwrap_err(),
        NameError::Reported("b".into())
    );
    assert_eq!(a.name(), "a");
    assert!(a.report());
}

#[test]
fn empty_latch_starts_open() {
    let latch = TrackingLatch::new(Vec::<String>::new()).unwrap();
    assert!(latch.is_open());
    assert_eq!(block_on(latch.wait()), Ok(()));
}

/// A handle dropped without reporting (an early return) fails the latch, naming it.
#[test]
fn dropped_handle_fails_the_latch_by_name() {
    let latch = TrackingLatch::<String>::new_failable(["db", "cache"]).unwrap();
    let mut waiter = latch.wait();
    assert!(poll_once(&mut waiter).is_pending());
    fn start(counter: tally_latch::Counter<'_, String>, config_ok: bool) -> Result<(), String> {
        if !config_ok {
            return Err("no config".into()); // early return: `counter` drops unreported
        }
        counter.report();
        Ok(())
    }
    assert!(start(latch.counter("db").unwrap(), true).is_ok());
    assert!(start(latch.counter("cache").unwrap(), false).is_err());
    let Poll::Ready(Err(failure)) = poll_once(&mut waiter) else {
        panic!("the waiter was not released by the dropped handle");
    };
    assert_eq!(
        failure,
        Failure::Abandoned {
            counter: "cache".into(),
            panicking: false
        }
    );
    assert_eq!(
        failure.to_string(),
        "counter `cache` was dropped without reporting"
    );
}

/// A task that panics before reporting fails the latch with its name; the waiter, blocked
/// on another thread, does not hang.
#[test]
fn panicking_counter_fails_the_latch_by_name() {
    let latch = Arc::new(TrackingLatch::<String>::new_failable(["consumer", "http"]).unwrap());
    let waiter = {
        let latch = latch.clone();
        thread::spawn(move || latch.wait_blocking())
    };
    latch.counter("consumer").unwrap().report();
    let http = latch.counter_owned("http").unwrap();
    let crashed = thread::spawn(move || {
        let _http = http;
        panic!("bind: address in use");
    })
    .join();
    assert!(crashed.is_err());
    let failure = waiter.join().unwrap().unwrap_err();
    assert_eq!(failure.counter(), Some("http"));
    assert_eq!(
        failure.to_string(),
        "counter `http` panicked before reporting"
    );
}

#[test]
fn handle_drop_after_failure_or_opening_changes_nothing() {
    let latch = TrackingLatch::<&str>::new_failable(["a", "b"]).unwrap();
    let a = latch.counter("a").unwrap();
    let b = latch.counter("b").unwrap();
    assert_eq!(b.fail("b broke"), Ok(()));
    drop(a); // the latch already failed: the first failure stays
    assert_eq!(latch.failure().unwrap().counter(), Some("b"));
    assert_eq!(latch.failure().unwrap().error(), Some(&"b broke"));

    let opened = TrackingLatch::new(["a"]).unwrap();
    let a = opened.counter("a").unwrap();
    opened.count_down_for("a").unwrap(); // reported by name, not through the handle
    drop(a);
    assert!(opened.is_open());
}

#[test]
fn counter_fail_after_end_hands_the_error_back() {
    let latch = TrackingLatch::<i32>::new_failable(["a", "b"]).unwrap();
    let a = latch.counter("a").unwrap();
    latch.fail(1).unwrap();
    assert_eq!(a.fail(2), Err(2));
    assert_eq!(latch.failure().unwrap().error(), Some(&1));
    assert_eq!(latch.failure().unwrap().counter(), None);
}

#[test]
fn unwinding_through_a_borrowed_handle_fails_the_latch() {
    let latch = TrackingLatch::new(["job"]).unwrap();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let _job = latch.counter("job").unwrap();
        panic!("job crashed");
    }));
    assert!(outcome.is_err());
    assert_eq!(
        latch.failure(),
        Some(&Failure::Abandoned {
            counter: "job".into(),
            panicking: true
        })
    );
}

/// Seed diagnostic hook: each count-down with its counter's name and the elapsed time since
/// the latch was created, and the time-to-open as a value.
#[test]
fn seed_diagnostic_hook() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let latch = TrackingLatch::new(["fast", "slow"])
        .unwrap()
        .on_count_down(move |event| {
            sink.lock().unwrap().push((
                event.counter().to_owned(),
                event.remaining(),
                event.opened(),
                event.elapsed(),
            ));
        });
    latch.count_down_for("fast").unwrap();
    thread::sleep(Duration::from_millis(15));
    latch.count_down_for("slow").unwrap();
    latch.count_down_for("slow").unwrap(); // a duplicate is not observed
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!((log[0].0.as_str(), log[0].1, log[0].2), ("fast", 1, false));
    assert_eq!((log[1].0.as_str(), log[1].1, log[1].2), ("slow", 0, true));
    assert!(log[1].3 >= log[0].3 + Duration::from_millis(15));
    assert_eq!(latch.time_to_open(), Some(log[1].3));
}

#[test]
fn time_to_open_is_set_before_waiters_wake() {
    let latch = Arc::new(TrackingLatch::new(["a"]).unwrap());
    let waiter = {
        let latch = latch.clone();
        thread::spawn(move || {
            latch.wait_blocking().unwrap();
            latch.time_to_open()
        })
    };
    thread::sleep(Duration::from_millis(5));
    latch.count_down_for("a").unwrap();
    assert!(waiter.join().unwrap().is_some());
}

#[test]
fn failed_latch_keeps_pending_and_count() {
    let latch = TrackingLatch::<&str>::new_failable(["a", "b", "c"]).unwrap();
    latch.count_down_for("a").unwrap();
    latch.fail("abort").unwrap();
    assert_eq!(latch.count_down_for("b"), Ok(false));
    assert_eq!(latch.count(), 2);
    assert_eq!(latch.pending(), ["c"]);
    assert_eq!(latch.time_to_open(), None);
    assert_eq!(
        format!("{latch:?}"),
        "TrackingLatch { count: 2, status: \"failed\", pending: [\"c\"] }"
    );
}

/// The timeout holds no `E`, so it prints (and is an error) whatever the latch's error
/// type: here none at all, and `()`, which has no `Display`.
#[test]
fn timeout_prints_for_every_error_type() {
    let never_failed = TrackingLatch::new(["a"]).unwrap();
    let pending = block_on(never_failed.wait_until(async {})).unwrap_err();
    assert_eq!(pending.to_string(), "timed out waiting for: a");
    let unit = TrackingLatch::<()>::new_failable(["b"]).unwrap();
    let pending = block_on(unit.wait_until(async {})).unwrap_err();
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(pending);
    assert_eq!(boxed.to_string(), "timed out waiting for: b");
}

/// `?` carries both the timeout and the failure out of a function that only borrows the
/// latch, into a boxed error.
#[test]
fn timeout_and_failure_propagate_with_question_mark() {
    type BoxError = Box<dyn std::error::Error + Send + Sync>;
    async fn gate(ready: &TrackingLatch<String>) -> Result<(), BoxError> {
        ready.wait_until(async {}).await??;
        Ok(())
    }
    let ready = TrackingLatch::new_failable(["db", "http"]).unwrap();
    let error = block_on(gate(&ready)).unwrap_err();
    assert_eq!(error.to_string(), "timed out waiting for: db, http");
    ready
        .counter("db")
        .unwrap()
        .fail(String::from("refused"))
        .unwrap();
    let error = block_on(gate(&ready)).unwrap_err();
    assert_eq!(error.to_string(), "counter `db` failed: refused");
}

/// A failure turned into a chained one gives its error as the `source()`, and leaves it out
/// of its own message, so a reporter that walks the chain prints each message once; the
/// error can be found in the chain by type. An abandonment has no source.
#[test]
fn chained_failure_gives_its_error_as_the_source() {
    use std::error::Error;

    #[derive(Clone, Debug)]
    struct Refused;
    impl std::fmt::Display for Refused {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("connection refused")
        }
    }
    impl Error for Refused {}

    fn chain(error: &(dyn Error + 'static)) -> Vec<String> {
        std::iter::successors(Some(error), |error| Error::source(*error))
            .map(ToString::to_string)
            .collect()
    }

    let ready = TrackingLatch::new_failable(["db", "http"]).unwrap();
    ready.counter("db").unwrap().fail(Refused).unwrap();
    let failure = block_on(ready.wait()).unwrap_err();
    // Unchained, the failure prints its error and has no source, as before.
    assert_eq!(chain(&failure), ["counter `db` failed: connection refused"]);

    let error: Box<dyn Error + Send + Sync> = failure.into_chained().into();
    assert_eq!(
        chain(&*error),
        ["counter `db` failed", "connection refused"]
    );
    let source = error.source().unwrap();
    assert!(source.downcast_ref::<Refused>().is_some());

    let owner = TrackingLatch::new_failable(["db"]).unwrap();
    owner.fail(Refused).unwrap();
    let failure = block_on(owner.wait()).unwrap_err().into_chained();
    assert_eq!(chain(&failure), ["latch failed", "connection refused"]);

    let abandoned = TrackingLatch::<Refused>::new_failable(["db"]).unwrap();
    drop(abandoned.counter("db").unwrap());
    let failure = block_on(abandoned.wait()).unwrap_err().into_chained();
    assert_eq!(
        chain(&failure),
        ["counter `db` was dropped without reporting"]
    );
}

/// Owned handles and owned waits move into `'static` threads; the latch needs no turbofish.
#[test]
fn owned_counters_and_waits_move_into_threads() {
    let ready = Arc::new(TrackingLatch::new(["consumer", "http"]).unwrap());
    let gate = thread::spawn({
        let wait = ready.wait_owned();
        move || block_on(wait)
    });
    let reporters: Vec<_> = ["consumer", "http"]
        .into_iter()
        .map(|name| {
            let counter = ready.counter_owned(name).unwrap();
            thread::spawn(move || {
                assert_eq!(counter.name(), name);
                counter.report()
            })
        })
        .collect();
    assert!(reporters.into_iter().all(|r| r.join().unwrap()));
    assert_eq!(gate.join().unwrap(), Ok(()));
    assert!(ready.pending().is_empty());
}

/// A dropped owned counter fails the latch naming it, as a borrowed one does.
#[test]
fn dropped_owned_counter_fails_the_latch() {
    let ready = Arc::new(TrackingLatch::new(["worker"]).unwrap());
    drop(ready.counter_owned("worker").unwrap());
    let failure = block_on(ready.wait_owned()).unwrap_err();
    assert_eq!(failure.counter(), Some("worker"));
    assert!(matches!(
        failure,
        Failure::Abandoned {
            panicking: false,
            ..
        }
    ));
}
