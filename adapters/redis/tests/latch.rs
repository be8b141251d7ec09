//! The tracking latch against a real `redis-server`, each test on tokio and on smol.

mod common;

use std::time::{Duration, Instant};

use common::latch_roles::{latch_options, now_ms, COUNTER, DELAY_MS, NAMES, POLICY};
use common::{after, child, sleep, wait, Reader, Rt, Server};
use tally_latch::{Failure, NameError};
use tally_redis::{
    ClaimError, CounterState, CreateError, Error, EventKind, LatchState, LatchWaitError, OnExpiry,
    Reason, ReportError, TrackingLatch,
};

/// Child processes enter here (see `latch_roles`); outside a child this does nothing.
#[test]
fn child_role_entry() {
    common::latch_roles::run_if_child();
}

const LIMIT: Duration = Duration::from_secs(20);

async fn open(server: &Server, name: &str, names: &[&str]) -> TrackingLatch {
    TrackingLatch::open(server.client(), name, names, latch_options())
        .await
        .expect("open latch")
}

fn env(key: &str, value: &str) -> (&'static str, String) {
    let key: &'static str = match key {
        "counter" => COUNTER,
        "names" => NAMES,
        "delay" => DELAY_MS,
        "policy" => POLICY,
        other => panic!("no env {other}"),
    };
    (key, value.to_string())
}

/// Runs `future`, failing the test (not hanging it) if it takes longer than `LIMIT`.
async fn within<F: core::future::Future>(future: F) -> F::Output {
    futures_lite::future::or(future, async {
        sleep(LIMIT).await;
        panic!("did not finish within {LIMIT:?}");
    })
    .await
}

/// Retries `op` while the server comes back, for up to 5 s.
async fn retry<T, F, Fut>(mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: core::future::Future<Output = Result<T, Error>>,
{
    let start = Instant::now();
    loop {
        match op().await {
            Ok(value) => return value,
            Err(_) if start.elapsed() < Duration::from_secs(5) => {
                sleep(Duration::from_millis(20)).await;
            }
            Err(error) => panic!("server did not come back: {error}"),
        }
    }
}

/// Reports, handing the counter back on transport failures, until an answer comes.
async fn report_surely(mut counter: tally_redis::Counter) -> u64 {
    let start = Instant::now();
    loop {
        match counter.report().await {
            Ok(left) => return left,
            Err(ReportError::Redis { counter: back, .. }) if start.elapsed() < LIMIT => {
                counter = *back;
                sleep(Duration::from_millis(20)).await;
            }
            Err(other) => panic!("report: {other}"),
        }
    }
}

fn kinds(events: &[tally_redis::LatchEvent], kind: EventKind) -> Vec<&str> {
    events
        .iter()
        .filter(|event| event.kind == kind)
        .map(|event| event.counter.as_str())
        .collect()
}

/// In one process: each counter counts once, the last report opens the latch, and
/// pending, time-to-open and the event stream say so.
async fn reports_count_once_and_open(_rt: Rt) {
    let server = server!();
    let latch = open(&server, "boot", &["db", "cache", "http"]).await;
    assert_eq!(latch.pending().await.unwrap(), ["db", "cache", "http"]);
    let db = latch.claim("db").await.unwrap();
    let cache = latch.claim("cache").await.unwrap();
    assert_eq!(db.report().await.unwrap(), 2);
    let snapshot = latch.snapshot().await.unwrap();
    assert_eq!((snapshot.state, snapshot.left), (LatchState::Waiting, 2));
    assert_eq!(snapshot.counters[0], ("db".into(), CounterState::Reported));
    assert!(
        matches!(&snapshot.counters[1].1, CounterState::Claimed { holder } if holder == cache.holder())
    );
    assert_eq!(snapshot.counters[2], ("http".into(), CounterState::Pending));
    assert_eq!(latch.time_to_open().await.unwrap(), None);
    // A reported counter cannot be claimed again.
    assert!(matches!(
        latch.claim("db").await,
        Err(ClaimError::Name(NameError::Reported(name))) if name == "db"
    ));
    match latch.wait_until(after(Duration::from_millis(100))).await {
        Err(LatchWaitError::TimedOut(pending)) => {
            assert_eq!(pending.names(), ["cache", "http"]);
            assert_eq!(pending.to_string(), "timed out waiting for: cache, http");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(cache.report().await.unwrap(), 1);
    let http = latch.claim("http").await.unwrap();
    sleep(Duration::from_millis(20)).await;
    assert_eq!(http.report().await.unwrap(), 0);
    within(latch.wait()).await.unwrap();
    latch.wait_until(after(Duration::ZERO)).await.unwrap();
    assert!(latch.pending().await.unwrap().is_empty());
    let took = latch.time_to_open().await.unwrap().expect("opened");
    assert!(took >= Duration::from_millis(100), "{took:?}");
    // Failing an open latch changes nothing.
    assert!(!latch.fail("too late").await.unwrap());
    within(latch.wait()).await.unwrap();

    let events = latch.events(None, 100).await.unwrap();
    let order: Vec<_> = events
        .iter()
        .map(|e| (e.kind, e.counter.as_str(), e.left))
        .collect();
    assert_eq!(
        order,
        [
            (EventKind::Created, "", 3),
            (EventKind::Claimed, "db", 3),
            (EventKind::Claimed, "cache", 3),
            (EventKind::Reported, "db", 2),
            (EventKind::Reported, "cache", 1),
            (EventKind::Claimed, "http", 1),
            (EventKind::Reported, "http", 0),
            (EventKind::Opened, "", 0),
        ]
    );
    // Reading on from an id gives the rest.
    let rest = latch.events(Some(&events[5].id), 100).await.unwrap();
    assert_eq!(rest, events[6..]);
    // An empty latch starts open.
    let empty = open(&server, "nothing", &[]).await;
    within(empty.wait()).await.unwrap();
    assert_eq!(empty.time_to_open().await.unwrap(), Some(Duration::ZERO));
}

/// A handle dropped unreported fails the latch naming itself (sent by the maintenance
/// pass); the first failure wins.
async fn dropped_counter_fails_naming_it(_rt: Rt) {
    let server = server!();
    let latch = open(&server, "drop", &["db", "web"]).await;
    let web = latch.claim("web").await.unwrap();
    drop(latch.claim("db").await.unwrap());
    latch.maintain_once().await.unwrap();
    let expect = Failure::Abandoned {
        counter: "db".into(),
        panicking: false,
    };
    match within(latch.wait()).await {
        Err(LatchWaitError::Failed(failure)) => {
            assert_eq!(failure, expect);
            assert_eq!(
                failure.to_string(),
                "counter `db` was dropped without reporting"
            );
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    // Later failures and reports do not replace it.
    assert!(!latch.fail("second").await.unwrap());
    match web.report().await {
        Err(ReportError::Failed(failure)) => assert_eq!(failure, expect),
        other => panic!("expected Failed, got {other:?}"),
    }
    assert!(matches!(latch.claim("web").await, Err(ClaimError::Failed(f)) if f == expect));
    let events = latch.events(None, 100).await.unwrap();
    assert_eq!(kinds(&events, EventKind::Failed), ["db"]);
    assert!(kinds(&events, EventKind::Reported).is_empty());

    // A handle dropped while its thread panics says so.
    let panicked = open(&server, "panic", &["worker"]).await;
    let counter = panicked.claim("worker").await.unwrap();
    let thread = std::thread::spawn(move || {
        let _counter = counter;
        panic!("worker crashed");
    });
    assert!(thread.join().is_err());
    panicked.maintain_once().await.unwrap();
    match within(panicked.wait()).await {
        Err(LatchWaitError::Failed(failure)) => {
            assert_eq!(
                failure.to_string(),
                "counter `worker` panicked before reporting"
            )
        }
        other => panic!("expected a failure, got {other:?}"),
    }

    // A counter's own failure carries its message; the owner's names no counter.
    let other = open(&server, "fail", &["a", "b"]).await;
    assert!(other
        .claim("a")
        .await
        .unwrap()
        .fail("disk full")
        .await
        .unwrap());
    match within(other.wait()).await {
        Err(LatchWaitError::Failed(failure)) => {
            assert_eq!(failure.counter(), Some("a"));
            assert_eq!(failure.error(), Some(&Reason::Error("disk full".into())));
            assert_eq!(failure.to_string(), "counter `a` failed: disk full");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    let owned = open(&server, "owner", &["a"]).await;
    assert!(owned.fail("cancelled").await.unwrap());
    match within(owned.wait()).await {
        Err(LatchWaitError::Failed(failure)) => {
            assert_eq!(failure.counter(), None);
            assert_eq!(failure.to_string(), "latch failed: cancelled");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// A lease nobody renews (no maintenance future) expires: under `OnExpiry::Fail` the
/// latch fails naming the counter and its holder, and the late report is not counted;
/// under `OnExpiry::Reclaim` the counter is released and the old handle is stale.
async fn unrenewed_lease_expires(_rt: Rt) {
    let server = server!();
    let latch = open(&server, "expire", &["db", "web"]).await;
    let db = latch.claim("db").await.unwrap();
    sleep(Duration::from_millis(200)).await;
    assert_eq!(latch.snapshot().await.unwrap().state, LatchState::Waiting);
    sleep(Duration::from_millis(200)).await;
    let expect = Failure::Failed {
        counter: Some("db".into()),
        error: Reason::LeaseExpired {
            holder: db.holder().to_string(),
        },
    };
    match within(latch.wait()).await {
        Err(LatchWaitError::Failed(failure)) => assert_eq!(failure, expect),
        other => panic!("expected a failure, got {other:?}"),
    }
    match db.report().await {
        Err(ReportError::Failed(failure)) => assert_eq!(failure, expect),
        other => panic!("expected Failed, got {other:?}"),
    }
    assert_eq!(latch.snapshot().await.unwrap().left, 2);

    let options = latch_options().on_expiry(OnExpiry::Reclaim);
    let reclaim = TrackingLatch::open(server.client(), "release", ["db"], options)
        .await
        .unwrap();
    let old = reclaim.claim("db").await.unwrap();
    sleep(Duration::from_millis(400)).await;
    assert_eq!(reclaim.pending().await.unwrap(), ["db"]);
    assert_eq!(
        reclaim.snapshot().await.unwrap().counters[0].1,
        CounterState::Pending
    );
    let new = reclaim.claim("db").await.unwrap();
    assert!(matches!(old.report().await, Err(ReportError::Stale)));
    assert_eq!(new.report().await.unwrap(), 0);
    within(reclaim.wait()).await.unwrap();
}

/// Bad input, each a clear error: bad names, duplicate names, a latch re-created with
/// other names or another lease, unknown and held counters, and the server down.
async fn bad_input(_rt: Rt) {
    let mut server = server!();
    let client = server.client();
    let dup = TrackingLatch::open(client.clone(), "x", ["a", "b", "a"], latch_options()).await;
    match dup {
        Err(error @ CreateError::Name(NameError::Duplicate(_))) => {
            assert_eq!(error.to_string(), "duplicate counter name `a`")
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    let bad = TrackingLatch::open(client.clone(), "x", ["a,b"], latch_options()).await;
    assert!(matches!(bad, Err(CreateError::BadName { name, .. }) if name == "a,b"));
    let bad = TrackingLatch::open(client.clone(), "two words", ["a"], latch_options()).await;
    assert!(matches!(bad, Err(CreateError::BadName { .. })));
    // A lease under 100 ms declares live holders dead on a busy machine.
    let short = latch_options().lease(Duration::from_millis(10));
    let bad = TrackingLatch::open(client.clone(), "x", ["a"], short).await;
    assert!(matches!(bad, Err(CreateError::BadOption(_))), "{bad:?}");

    let latch = open(&server, "x", &["a", "b"]).await;
    // The same set again, in another order, is fine.
    open(&server, "x", &["b", "a"]).await;
    match TrackingLatch::open(client.clone(), "x", ["a", "c"], latch_options()).await {
        Err(error @ CreateError::NamesDiffer { .. }) => assert_eq!(
            error.to_string(),
            "the latch exists with counters [a, b], not [a, c]"
        ),
        other => panic!("expected NamesDiffer, got {other:?}"),
    }
    let longer = latch_options().lease(Duration::from_secs(1));
    match TrackingLatch::open(client.clone(), "x", ["a", "b"], longer).await {
        Err(error @ CreateError::Mismatch { .. }) => assert_eq!(
            error.to_string(),
            "the latch exists with lease_ms = 300, not 1000; settings are fixed at creation"
        ),
        other => panic!("expected Mismatch, got {other:?}"),
    }
    let reclaim = latch_options().on_expiry(OnExpiry::Reclaim);
    assert!(matches!(
        TrackingLatch::open(client.clone(), "x", ["a", "b"], reclaim).await,
        Err(CreateError::Mismatch { field, .. }) if field == "policy"
    ));

    match latch.claim("zzz").await {
        Err(error @ ClaimError::Name(NameError::Unknown(_))) => {
            assert_eq!(error.to_string(), "unknown counter name `zzz`")
        }
        other => panic!("expected Unknown, got {other:?}"),
    }
    let held = latch.claim("a").await.unwrap();
    // Held by a live lease: refused, here and from another handle.
    assert!(matches!(
        latch.claim("a").await,
        Err(ClaimError::Name(NameError::Claimed(name))) if name == "a"
    ));
    let other = open(&server, "x", &["a", "b"]).await;
    assert!(matches!(
        other.claim("a").await,
        Err(ClaimError::Name(NameError::Claimed(_)))
    ));
    held.report().await.unwrap();

    // The server down: clear transport errors, nothing counted.
    let b = latch.claim("b").await.unwrap();
    server.kill9();
    let down = TrackingLatch::open(server.client(), "y", ["a"], latch_options()).await;
    match down {
        Err(CreateError::Redis(Error::Unavailable(_) | Error::Unknown(_))) => {}
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert!(matches!(
        within(latch.wait()).await,
        Err(LatchWaitError::Redis(_))
    ));
    assert!(matches!(latch.claim("b").await, Err(ClaimError::Redis(_))));
    let b = match b.report().await {
        Err(ReportError::Redis { counter, error }) => {
            assert!(error.to_string().starts_with("redis is unavailable") || error.is_unknown());
            *counter
        }
        other => panic!("expected a transport error, got {other:?}"),
    };
    server.restart();
    // Nothing was counted while it was down; the handle that came back reports once.
    assert_eq!(retry(|| latch.pending()).await, ["b"]);
    assert_eq!(report_surely(b).await, 0);
    within(latch.wait()).await.unwrap();
}

/// A server restart (kill -9, then the AOF) in the middle: no report lost, none counted
/// twice, also a report repeated after its reply was lost.
async fn server_restart_keeps_every_report(_rt: Rt) {
    let mut server = server!();
    let long = latch_options().lease(Duration::from_secs(10));
    let names = ["a", "b", "c", "d"];
    let latch = TrackingLatch::open(server.client(), "durable", names, long)
        .await
        .unwrap();
    let mut counters = Vec::new();
    for name in names {
        counters.push(latch.claim(name).await.unwrap());
    }
    let mut counters = counters.into_iter();
    assert_eq!(counters.next().unwrap().report().await.unwrap(), 3);
    assert_eq!(counters.next().unwrap().report().await.unwrap(), 2);
    let before = latch.snapshot().await.unwrap();

    server.kill9();
    server.restart();
    let after_restart = retry(|| latch.snapshot()).await;
    assert_eq!(after_restart, before);
    assert_eq!(report_surely(counters.next().unwrap()).await, 1);
    assert_eq!(latch.pending().await.unwrap(), ["d"]);

    // A claim whose first reply is lost (the server paused past the response timeout)
    // is tried again under the same holder and recognized: one claim, one event.
    let extra = TrackingLatch::open(server.client(), "claims", ["x"], long)
        .await
        .unwrap();
    server.pause();
    let resume = async {
        sleep(Duration::from_millis(700)).await;
        server.resume();
    };
    let (claimed, ()) = futures_lite::future::zip(extra.claim("x"), resume).await;
    let x = claimed.expect("the claim is tried again after its lost reply");
    let events = extra.events(None, 100).await.unwrap();
    assert_eq!(kinds(&events, EventKind::Claimed), ["x"]);
    assert_eq!(x.report().await.unwrap(), 0);

    // A lost reply: the server is paused while the report is in flight, so the reply
    // times out; the report ran once the server resumed, and the repeat is recognized.
    let d = counters.next().unwrap();
    server.pause();
    let d = match d.report().await {
        Err(lost @ ReportError::Redis { .. }) => {
            let source = core::error::Error::source(&lost).map(ToString::to_string);
            let ReportError::Redis { counter, error } = lost else {
                unreachable!()
            };
            assert!(error.is_unknown(), "{error}");
            assert_eq!(source, Some(error.to_string()));
            *counter
        }
        other => panic!("expected a lost reply, got {other:?}"),
    };
    server.resume();
    assert_eq!(report_surely(d).await, 0);
    within(latch.wait()).await.unwrap();
    let events = retry(|| latch.events(None, 100)).await;
    assert_eq!(kinds(&events, EventKind::Reported), ["a", "b", "c", "d"]);
    assert_eq!(kinds(&events, EventKind::Opened).len(), 1);
    let snapshot = latch.snapshot().await.unwrap();
    assert_eq!((snapshot.state, snapshot.left), (LatchState::Open, 0));
}

/// A claim whose replies were all lost lands later, under the holder id the handle
/// chose. The handle recognises it: claiming the same counter again takes it over
/// instead of being refused; and a late claim the application gave up on is released by
/// the maintenance pass instead of failing the latch one lease later.
async fn a_late_claim_is_recognised(_rt: Rt) {
    let server = server!();
    let latch = open(&server, "ghost", &["db", "web"]).await;
    // Load the scripts first: an EVALSHA refused with NOSCRIPT would do nothing.
    latch.claim("web").await.unwrap().report().await.unwrap();
    server.pause();
    assert!(matches!(latch.claim("db").await, Err(ClaimError::Redis(_))));
    server.resume();
    sleep(Duration::from_millis(100)).await;
    let held = latch.snapshot().await.unwrap();
    assert!(
        matches!(&held.counters[0].1, CounterState::Claimed { .. }),
        "the lost claim landed: {held:?}"
    );
    let db = latch
        .claim("db")
        .await
        .expect("its own late claim, recognised");
    // Renewed from now on: past two leases it still holds.
    let renew = async {
        latch.maintain(async_io::Timer::after).await;
    };
    futures_lite::future::or(renew, sleep(Duration::from_millis(700))).await;
    assert_eq!(latch.snapshot().await.unwrap().state, LatchState::Waiting);
    assert_eq!(db.report().await.unwrap(), 0);
    within(latch.wait()).await.unwrap();

    // Given up on: the maintenance pass releases it.
    let other = open(&server, "ghost2", &["db"]).await;
    other.snapshot().await.unwrap();
    server.pause();
    assert!(matches!(other.claim("db").await, Err(ClaimError::Redis(_))));
    server.resume();
    sleep(Duration::from_millis(100)).await;
    other.maintain_once().await.unwrap();
    let second = open(&server, "ghost2", &["db"]).await;
    let db = second.claim("db").await.expect("released, claimable");
    sleep(Duration::from_millis(400)).await;
    second.maintain_once().await.unwrap();
    assert_eq!(second.snapshot().await.unwrap().state, LatchState::Waiting);
    assert_eq!(db.report().await.unwrap(), 0);
}

/// A latch whose keys were deleted says so in words that fit a latch, and a report to it
/// is not handed back as retryable (the documented retry loop would spin).
async fn deleted_latch_is_gone(_rt: Rt) {
    let server = server!();
    let latch = open(&server, "deleted", &["a"]).await;
    let a = latch.claim("a").await.unwrap();
    let _: () = server.query(&redis::cmd("FLUSHALL"));
    match a.report().await {
        Err(error @ ReportError::Gone) => {
            let text = error.to_string();
            assert!(!text.contains("queue"), "{text}");
        }
        other => panic!("expected Gone, got {other:?}"),
    }
    match latch.snapshot().await {
        Err(error @ Error::Gone) => assert!(!error.to_string().contains("queue"), "{error}"),
        other => panic!("expected Gone, got {other:?}"),
    }
}

/// A step of the server's clock by an hour does not fail a latch naming a live holder
/// that renews its lease.
async fn clock_step_forward_spares_a_live_holder(_rt: Rt) {
    let server = clock_server!();
    let latch = open(&server, "clock", &["db", "web"]).await;
    let waiter = open(&server, "clock", &["db", "web"]).await;
    let db = latch.claim("db").await.unwrap();
    let renew = async {
        latch.maintain(async_io::Timer::after).await;
    };
    let watch = async {
        for _ in 0..4 {
            waiter.snapshot().await.unwrap();
            sleep(Duration::from_millis(80)).await;
        }
        server.step_clock(3_600_000);
        match waiter.wait_until(after(Duration::from_millis(900))).await {
            Err(LatchWaitError::TimedOut(pending)) => assert_eq!(pending.names(), ["db", "web"]),
            other => panic!("expected a timeout, got {other:?}"),
        }
    };
    futures_lite::future::or(watch, renew).await;
    assert_eq!(waiter.snapshot().await.unwrap().state, LatchState::Waiting);
    assert_eq!(db.report().await.unwrap(), 1);
}

/// A step of the server's clock back by an hour does not hide a dead holder for the
/// hour: the latch fails naming it within a few leases.
async fn clock_step_back_still_fails_a_dead_holder(_rt: Rt) {
    let server = clock_server!();
    let latch = open(&server, "clock", &["db"]).await;
    for _ in 0..3 {
        latch.snapshot().await.unwrap();
        sleep(Duration::from_millis(60)).await;
    }
    let db = latch.claim("db").await.unwrap();
    let holder = db.holder().to_string();
    // A holder that dies runs no `Drop`.
    std::mem::forget(db);
    server.step_clock(-3_600_000);
    match latch.wait_until(after(Duration::from_secs(3))).await {
        Err(LatchWaitError::Failed(failure)) => assert_eq!(
            failure,
            Failure::Failed {
                counter: Some("db".into()),
                error: Reason::LeaseExpired { holder },
            }
        ),
        other => panic!("expected a failure naming db, got {other:?}"),
    }
}

on_both!(
    reports_count_once_and_open,
    dropped_counter_fails_naming_it,
    unrenewed_lease_expires,
    bad_input,
    server_restart_keeps_every_report,
    a_late_claim_is_recognised,
    deleted_latch_is_gone,
    clock_step_forward_spares_a_live_holder,
    clock_step_back_still_fails_a_dead_holder,
);

mod processes {
    //! Tests with child processes (the test binary in a role, see `common::latch_roles`).

    use super::*;

    /// Three processes claim and report; a waiter in a fourth opens at the last report
    /// and not before.
    async fn three_processes_open_the_latch(rt: Rt) {
        let server = server!();
        let names = "a,b,c";
        let latch = open(&server, "ready", &["a", "b", "c"]).await;
        let mut waiter = child(&server, "ready", "latch_waiter", rt, &[env("names", names)]);
        let waiting = Reader::new(&mut waiter);
        waiting.until("WAITING", LIMIT);
        let mut children = Vec::new();
        for (name, delay) in [("a", "0"), ("b", "0"), ("c", "1500")] {
            let mut reporter = child(
                &server,
                "ready",
                "latch_reporter",
                rt,
                &[
                    env("names", names),
                    env("counter", name),
                    env("delay", delay),
                ],
            );
            let reader = Reader::new(&mut reporter);
            assert_eq!(reader.until("CLAIMED", LIMIT), [format!("CLAIMED {name}")]);
            children.push((reporter, reader));
        }
        for (_, reader) in &children[..2] {
            let line = reader.until("REPORTED", LIMIT).pop().unwrap();
            assert!(line.starts_with("REPORTED "), "{line}");
        }
        // Before the last report: the waiter has not opened, and a deadline names `c`.
        match latch.wait_until(after(Duration::from_millis(200))).await {
            Err(LatchWaitError::TimedOut(pending)) => assert_eq!(pending.names(), ["c"]),
            other => panic!("expected a timeout naming c, got {other:?}"),
        }
        assert_eq!(waiting.next_within(Duration::ZERO), None);
        let last = children[2].1.until("REPORTED", LIMIT).pop().unwrap();
        let fields: Vec<&str> = last.split(' ').collect();
        assert_eq!(fields[..3], ["REPORTED", "c", "0"]);
        let reported_at: u128 = fields[3].parse().unwrap();
        let opened = waiting.until("OPENED", LIMIT).pop().unwrap();
        let opened_at: u128 = opened["OPENED ".len()..].parse().unwrap();
        assert!(
            opened_at >= reported_at,
            "opened at {opened_at}, last report at {reported_at}"
        );
        within(latch.wait()).await.unwrap();
        let events = latch.events(None, 100).await.unwrap();
        assert_eq!(kinds(&events, EventKind::Claimed), ["a", "b", "c"]);
        let mut reported = kinds(&events, EventKind::Reported);
        assert_eq!(reported.pop(), Some("c"));
        reported.sort_unstable();
        assert_eq!(reported, ["a", "b"]);
        assert_eq!(events.last().unwrap().kind, EventKind::Opened);
        assert_eq!(kinds(&events, EventKind::Opened).len(), 1);
        for (mut reporter, _) in children {
            assert!(wait(&mut reporter, LIMIT).success());
        }
        assert!(wait(&mut waiter, LIMIT).success());
    }

    /// A holder killed with SIGKILL before it reports: every waiter (two handles here,
    /// one in another process) fails naming it, within one lease (plus one poll) of the
    /// kill.
    async fn killed_holder_fails_every_waiter(rt: Rt) {
        let server = server!();
        let names = "db,web";
        let latch = open(&server, "crash", &["db", "web"]).await;
        let second = open(&server, "crash", &["db", "web"]).await;
        let mut holder = child(
            &server,
            "crash",
            "latch_holder",
            rt,
            &[env("names", names), env("counter", "db")],
        );
        let claimed = Reader::new(&mut holder)
            .until("CLAIMED", LIMIT)
            .pop()
            .unwrap();
        let holder_id = claimed.split(' ').nth(2).unwrap().to_string();
        let mut waiter = child(&server, "crash", "latch_waiter", rt, &[env("names", names)]);
        let waiting = Reader::new(&mut waiter);
        waiting.until("WAITING", LIMIT);
        // Past one lease, the heartbeat keeps the claim alive.
        sleep(Duration::from_millis(500)).await;
        let snapshot = latch.snapshot().await.unwrap();
        assert_eq!(snapshot.state, LatchState::Waiting);
        assert_eq!(
            snapshot.counters[0].1,
            CounterState::Claimed {
                holder: holder_id.clone()
            }
        );

        holder.kill().unwrap();
        let killed = Instant::now();
        let killed_ms = now_ms();
        holder.wait().unwrap();
        let (first, other) = within(futures_lite::future::zip(latch.wait(), second.wait())).await;
        let elapsed = killed.elapsed();
        let expect = Failure::Failed {
            counter: Some("db".into()),
            error: Reason::LeaseExpired {
                holder: holder_id.clone(),
            },
        };
        for result in [first, other] {
            match result {
                Err(LatchWaitError::Failed(failure)) => assert_eq!(failure, expect),
                other => panic!("expected a failure naming db, got {other:?}"),
            }
        }
        let lease = latch_options().get_lease();
        let poll = latch_options().get_poll();
        // One lease, plus at most one more when a command delayed on a loaded host looked
        // like a step of the server's clock (expiry is then held off for a lease), plus the
        // polls that notice it.
        let lease = lease * 2;
        assert!(
            elapsed <= lease + poll * 2,
            "failed {elapsed:?} after the kill"
        );
        let failed = waiting.until("FAILED", LIMIT).pop().unwrap();
        let fields: Vec<&str> = failed.split(' ').collect();
        assert_eq!(fields[1], "db");
        let failed_at: u128 = fields[2].parse().unwrap();
        let lag = failed_at.saturating_sub(killed_ms);
        assert!(
            lag <= (lease + poll * 2).as_millis(),
            "the child waiter failed {lag} ms after the kill"
        );
        eprintln!(
            "killed holder: waiters failed {elapsed:?} (here) and {lag} ms (child) after the kill"
        );
        assert!(wait(&mut waiter, LIMIT).success());
        let events = latch.events(None, 100).await.unwrap();
        assert_eq!(kinds(&events, EventKind::Failed), ["db"]);
    }

    /// By `OnExpiry::Reclaim`, a killed holder's counter becomes claimable again, and a
    /// new holder's report opens the latch.
    async fn killed_holder_reclaimed_by_policy(rt: Rt) {
        let server = server!();
        let options = latch_options().on_expiry(OnExpiry::Reclaim);
        let latch = TrackingLatch::open(server.client(), "again", ["db"], options)
            .await
            .unwrap();
        let mut holder = child(
            &server,
            "again",
            "latch_holder",
            rt,
            &[
                env("names", "db"),
                env("counter", "db"),
                env("policy", "reclaim"),
            ],
        );
        Reader::new(&mut holder).until("CLAIMED", LIMIT);
        assert!(matches!(
            latch.claim("db").await,
            Err(ClaimError::Name(NameError::Claimed(_)))
        ));
        holder.kill().unwrap();
        holder.wait().unwrap();
        let start = Instant::now();
        let counter = loop {
            match latch.claim("db").await {
                Ok(counter) => break counter,
                Err(ClaimError::Name(NameError::Claimed(_))) if start.elapsed() < LIMIT => {
                    sleep(Duration::from_millis(20)).await;
                }
                Err(other) => panic!("claim: {other}"),
            }
        };
        // One lease (plus at most one more when a delayed command looked like a step of
        // the server's clock, which holds expiry off for a lease).
        let bound = latch_options().get_lease() * 2 + Duration::from_millis(100);
        assert!(start.elapsed() <= bound, "{:?}", start.elapsed());
        assert_eq!(counter.report().await.unwrap(), 0);
        within(latch.wait()).await.unwrap();
        let events = latch.events(None, 100).await.unwrap();
        assert_eq!(kinds(&events, EventKind::Released), ["db"]);
        assert_eq!(kinds(&events, EventKind::Claimed), ["db", "db"]);
        assert!(kinds(&events, EventKind::Failed).is_empty());
    }

    /// A stalled holder (alive, renewing its lease, never reporting): the deadline names
    /// exactly its counter, and the latch does not fail.
    async fn stalled_holder_named_at_deadline(rt: Rt) {
        let server = server!();
        let names = "a,b,c";
        let latch = open(&server, "stall", &["a", "b", "c"]).await;
        let mut holder = child(
            &server,
            "stall",
            "latch_holder",
            rt,
            &[env("names", names), env("counter", "b")],
        );
        Reader::new(&mut holder).until("CLAIMED", LIMIT);
        latch.claim("a").await.unwrap().report().await.unwrap();
        latch.claim("c").await.unwrap().report().await.unwrap();
        // Twice the lease: the heartbeat keeps `b` claimed, so this is a timeout.
        match latch.wait_until(after(Duration::from_millis(600))).await {
            Err(error @ LatchWaitError::TimedOut(_)) => {
                assert_eq!(error.to_string(), "timed out waiting for: b");
                let LatchWaitError::TimedOut(pending) = error else {
                    unreachable!()
                };
                assert_eq!(pending.names(), ["b"]);
            }
            other => panic!("expected a timeout naming b, got {other:?}"),
        }
        assert_eq!(latch.snapshot().await.unwrap().state, LatchState::Waiting);
        holder.kill().unwrap();
        holder.wait().unwrap();
    }

    on_both!(
        three_processes_open_the_latch,
        killed_holder_fails_every_waiter,
        killed_holder_reclaimed_by_policy,
        stalled_holder_named_at_deadline,
    );
}
