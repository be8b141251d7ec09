//! The readiness demo (`examples/readiness`) served on an ephemeral loopback port and
//! probed with real HTTP requests.

#[path = "../examples/readiness/metrics.rs"]
mod metrics;
#[path = "../examples/readiness/service.rs"]
mod service;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use service::{get, post, Config, Service, ServiceError, Warmup};
use tally_latch::{CountDownLatch, Failure};

/// A bound on every wait in these tests, far above what they need.
const MARGIN: Duration = Duration::from_secs(5);

/// Each test's service has its own label: the tests share the process's metrics recorder.
fn config(label: &'static str, warmup: Warmup, startup_timeout: Duration) -> Config {
    Config {
        label,
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        consumer_delay: Duration::from_millis(10),
        warmup,
        startup_timeout,
        verbose: false,
    }
}

/// Probes `/readyz` until `done` accepts the answer, failing after `MARGIN`; every answer
/// on the way must pass `check`.
async fn probe_until(
    addr: SocketAddr,
    done: impl Fn(u16, &str) -> bool,
    check: impl Fn(u16, &str),
) -> (u16, String) {
    let start = Instant::now();
    loop {
        let (status, body) = get(addr, "/readyz").await.expect("the probe answers");
        if done(status, &body) {
            return (status, body);
        }
        check(status, &body);
        assert!(start.elapsed() < MARGIN, "stuck at {status} {body}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_answers_503_until_the_delayed_component_reports_then_200() {
    let gate = Arc::new(CountDownLatch::new(1));
    let service = Service::start(config(
        "readyz",
        Warmup::When(gate.clone()),
        Duration::from_secs(30),
    ))
    .await
    .unwrap();
    let addr = service.addr;

    // Live from the start, whatever readiness says.
    assert_eq!(get(addr, "/healthz").await.unwrap(), (200, "ok".into()));

    // The consumer and http come up; the cache warmer is held back by the gate.
    let not_ready = |status: u16, body: &str| {
        assert_eq!(status, 503);
        assert!(body.starts_with("waiting for: "), "{body}");
        assert!(body.contains("cache-warmer"), "{body}");
    };
    probe_until(
        addr,
        |_, body| body == "waiting for: cache-warmer",
        not_ready,
    )
    .await;
    for _ in 0..10 {
        assert_eq!(
            get(addr, "/readyz").await.unwrap(),
            (503, "waiting for: cache-warmer".into())
        );
        assert_eq!(get(addr, "/healthz").await.unwrap().0, 200);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(service.ready.pending(), ["cache-warmer"]);

    gate.count_down();
    let (status, body) = probe_until(addr, |status, _| status == 200, not_ready).await;
    assert_eq!((status, body.as_str()), (200, "ready"));
    assert!(service.ready.is_open());
    assert_eq!(get(addr, "/nope").await.unwrap().0, 404);
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_startup_that_times_out_fails_naming_the_missing_component() {
    let never = Arc::new(CountDownLatch::new(1));
    let timeout = Duration::from_millis(200);
    let start = Instant::now();
    let service = Service::start(config("timeout", Warmup::When(never), timeout))
        .await
        .unwrap();
    let addr = service.addr;
    let (status, body) = get(addr, "/readyz").await.unwrap();
    assert_eq!(status, 503);
    assert!(body.contains("cache-warmer"), "{body}");

    let error = service.finished().await.unwrap_err();
    let elapsed = start.elapsed();
    assert!(elapsed >= timeout && elapsed < MARGIN, "{elapsed:?}");
    match &error {
        ServiceError::StartupTimedOut(pending) => assert_eq!(pending.names(), ["cache-warmer"]),
        other => panic!("expected a startup timeout, got {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "startup failed: timed out waiting for: cache-warmer"
    );
    // Everything stopped with the supervisor, the HTTP server too.
    let refused = async {
        while get(addr, "/healthz").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(MARGIN, refused).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_that_panics_before_reporting_fails_the_latch_with_its_name() {
    let service = Service::start(config("panic", Warmup::Panic, Duration::from_secs(30)))
        .await
        .unwrap();
    let ready = service.ready.clone();
    let start = Instant::now();
    let error = service.finished().await.unwrap_err();
    assert!(start.elapsed() < MARGIN);
    match &error {
        ServiceError::StartupFailed(Failure::Abandoned { counter, panicking }) => {
            assert_eq!(counter, "cache-warmer");
            assert!(*panicking);
        }
        other => panic!("expected the cache warmer's failure, got {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "startup failed: counter `cache-warmer` panicked before reporting"
    );
    assert_eq!(
        ready.failure().and_then(Failure::counter),
        Some("cache-warmer")
    );
    assert!(!ready.is_open());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slowest_component_sets_the_time_to_open() {
    let warmup = Duration::from_millis(150);
    let service = Service::start(config(
        "slowest",
        Warmup::After(warmup),
        Duration::from_secs(30),
    ))
    .await
    .unwrap();
    let (status, _) = get(service.addr, "/readyz").await.unwrap();
    assert_eq!(status, 503);
    probe_until(
        service.addr,
        |status, _| status == 200,
        |status, _| assert_eq!(status, 503),
    )
    .await;
    let time_to_open = service.ready.time_to_open().expect("the latch opened");
    assert!(
        time_to_open >= warmup && time_to_open < MARGIN,
        "{time_to_open:?}"
    );
    service.stop().await;
}

/// The value of the sample `name` (with its labels, as written) on a metrics page.
fn sample(page: &str, name: &str) -> Option<f64> {
    page.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .map(|value| value.parse().expect("a number"))
}

/// `/metrics`, scraped over HTTP, follows the latch and the ledger: pending components
/// before, the time to open after, and each job's ending by outcome, every figure equal to
/// the primitives' own (`ledger()`, `time_to_open()`); `POST /jobs/NAME` is refused until
/// the service is ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_export_readiness_and_the_ledger() {
    let gate = Arc::new(CountDownLatch::new(1));
    let service = Service::start(config(
        "metrics",
        Warmup::When(gate.clone()),
        Duration::from_secs(30),
    ))
    .await
    .unwrap();
    let addr = service.addr;
    probe_until(
        addr,
        |_, body| body == "waiting for: cache-warmer",
        |status, _| assert_eq!(status, 503),
    )
    .await;
    let (status, page) = get(addr, "/metrics").await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        sample(&page, "tally_latch_open{latch=\"metrics\"}"),
        Some(0.0)
    );
    assert_eq!(
        sample(&page, "tally_latch_pending{latch=\"metrics\"}"),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &page,
            "readiness_pending{latch=\"metrics\",component=\"cache-warmer\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &page,
            "readiness_pending{latch=\"metrics\",component=\"consumer\"}"
        ),
        Some(0.0)
    );
    assert_eq!(
        sample(
            &page,
            "tally_latch_time_to_open_seconds_count{latch=\"metrics\"}"
        ),
        None
    );
    assert_eq!(
        post(addr, "/jobs/early").await.unwrap(),
        (503, "not ready".into())
    );
    assert_eq!(
        sample(&page, "tally_queue_accepted_total{queue=\"metrics\"}"),
        Some(0.0)
    );

    gate.count_down();
    probe_until(
        addr,
        |status, _| status == 200,
        |status, _| assert_eq!(status, 503),
    )
    .await;
    for name in ["one", "two", "bad-three"] {
        let (status, id) = post(addr, &format!("/jobs/{name}")).await.unwrap();
        assert_eq!(status, 202, "{id}");
        assert!(id.starts_with('#'), "{id}");
    }
    let start = Instant::now();
    while service.jobs.ledger().ended() < 3 {
        assert!(start.elapsed() < MARGIN, "{}", service.jobs.ledger());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (_, page) = get(addr, "/metrics").await.unwrap();
    let ledger = service.jobs.ledger();
    let queue = |name: &str| sample(&page, &format!("{name}{{queue=\"metrics\"}}"));
    let ended = |outcome: &str| {
        let name = format!("tally_queue_ended_total{{queue=\"metrics\",outcome=\"{outcome}\"}}");
        sample(&page, &name)
    };
    assert_eq!(
        queue("tally_queue_accepted_total"),
        Some(ledger.accepted as f64)
    );
    assert_eq!(ended("succeeded"), Some(ledger.succeeded as f64));
    assert_eq!(ended("rejected"), Some(ledger.rejected as f64));
    assert_eq!(ended("uncertain"), Some(ledger.uncertain as f64));
    assert_eq!(ended("abandoned"), Some(ledger.abandoned as f64));
    assert_eq!(ended("discarded"), Some(ledger.discarded as f64));
    assert_eq!(queue("tally_queue_buffered"), Some(ledger.buffered as f64));
    assert_eq!(
        queue("tally_queue_in_flight"),
        Some(ledger.in_flight as f64)
    );
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.rejected),
        (3, 2, 1)
    );
    // Each take and each delivery's end was recorded as it happened.
    assert_eq!(queue("tally_queue_in_flight_seconds_count"), Some(3.0));
    assert_eq!(queue("tally_queue_buffered_seconds_count"), Some(3.0));

    assert_eq!(
        sample(&page, "tally_latch_open{latch=\"metrics\"}"),
        Some(1.0)
    );
    assert_eq!(
        sample(&page, "tally_latch_failed{latch=\"metrics\"}"),
        Some(0.0)
    );
    let time_to_open = service.ready.time_to_open().unwrap().as_secs_f64();
    let latch = |name: &str| sample(&page, &format!("{name}{{latch=\"metrics\"}}"));
    assert_eq!(latch("tally_latch_time_to_open_seconds_count"), Some(1.0));
    let exported = latch("tally_latch_time_to_open_seconds_sum").unwrap();
    assert!(
        (exported - time_to_open).abs() < 1e-6,
        "{exported} vs {time_to_open}"
    );
    service.stop().await;
}
