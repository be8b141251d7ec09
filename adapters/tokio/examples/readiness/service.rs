//! A service that reports ready only when its long-lived components are up.
//!
//! Three components (`consumer`, `cache-warmer`, `http`) run in a [`JoinSet`]: if one dies,
//! the set is dropped and everything stops. Each holds the [`OwnedCounter`] for its own name in
//! a [`TrackingLatch`] and reports once it can serve, then keeps running. The HTTP
//! component serves `/healthz` (200 from the start: the process is alive) and `/readyz`
//! (503 with the components still pending, 200 once the latch opens, 503 with the failure
//! if a component failed). A component that panics before reporting drops its counter
//! while unwinding, which fails the latch with its name; a startup that misses its
//! deadline fails with the names of the components that never reported.
//!
//! The consumer works a job queue: `POST /jobs/NAME` enqueues the job `NAME` (202 with its
//! id, or 503 while the service is not ready), and `/metrics` exports the readiness latch (open,
//! failed, pending, each component pending, time to open) and the queue's ledger through the
//! `metrics` facade, in Prometheus' text format; the latch and the queue carry the service's
//! label.

use std::convert::Infallible;
use std::fmt;
use std::future::pending;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tally_latch::{CountDownLatch, Failure, OwnedCounter, StillPending, TrackingLatch};
use tally_queue::Queue;
use tally_tokio::LatchExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// The components, in the order `/readyz` lists the pending ones.
pub(crate) const COMPONENTS: [&str; 3] = ["consumer", "cache-warmer", "http"];

/// How the cache warmer comes up.
#[derive(Debug, Clone)]
pub(crate) enum Warmup {
    /// Ready after this long.
    After(Duration),
    /// Ready once this latch opens (lets a caller decide the moment).
    When(Arc<CountDownLatch>),
    /// Panics before reporting.
    Panic,
}

/// What to start.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Where to listen; port 0 picks a free one.
    pub(crate) addr: SocketAddr,
    /// How long the consumer takes to connect.
    pub(crate) consumer_delay: Duration,
    /// How the cache warmer comes up.
    pub(crate) warmup: Warmup,
    /// How long startup may take before the service gives up.
    pub(crate) startup_timeout: Duration,
    /// Print each component's readiness as it reports.
    pub(crate) verbose: bool,
    /// The label of the readiness latch and the job queue, in their metrics and events.
    pub(crate) label: &'static str,
}

/// Why the service stopped.
#[derive(Debug)]
pub(crate) enum ServiceError {
    /// The startup deadline passed; names the components that never reported.
    StartupTimedOut(StillPending),
    /// A component failed, or panicked, before every component was ready. The components
    /// fail the latch only by dropping their counters, so the failure carries no error.
    StartupFailed(Failure<Infallible>),
    /// A component ended after startup (they are meant to run forever), so everything
    /// stopped.
    ComponentExited(String),
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StartupTimedOut(pending) => write!(f, "startup failed: {pending}"),
            Self::StartupFailed(failure) => write!(f, "startup failed: {failure}"),
            Self::ComponentExited(why) => write!(f, "a component stopped: {why}"),
        }
    }
}

impl std::error::Error for ServiceError {}

impl From<StillPending> for ServiceError {
    fn from(pending: StillPending) -> Self {
        Self::StartupTimedOut(pending)
    }
}

impl From<Failure<Infallible>> for ServiceError {
    fn from(failure: Failure<Infallible>) -> Self {
        Self::StartupFailed(failure)
    }
}

/// A running service.
#[derive(Debug)]
pub(crate) struct Service {
    /// The address `/healthz` and `/readyz` are served on.
    pub(crate) addr: SocketAddr,
    /// The readiness latch the probe reads.
    pub(crate) ready: Arc<TrackingLatch>,
    /// The jobs the consumer works.
    pub(crate) jobs: Arc<Queue<String>>,
    supervisor: JoinHandle<Result<(), ServiceError>>,
}

impl Service {
    /// Binds the listener and starts the components; returns at once, before any is ready.
    pub(crate) async fn start(config: Config) -> io::Result<Self> {
        crate::metrics::install();
        let listener = TcpListener::bind(config.addr).await?;
        let addr = listener.local_addr()?;
        let mut latch = TrackingLatch::new(COMPONENTS)
            .expect("the names are distinct")
            .with_label(config.label);
        if config.verbose {
            latch = latch.on_count_down(|event| {
                println!(
                    "  {:>5} ms  {} is ready, {} to go",
                    event.elapsed().as_millis(),
                    event.counter(),
                    event.remaining()
                );
            });
        }
        let ready = Arc::new(latch);
        let jobs = Arc::new(Queue::unbounded().with_label(config.label));
        let supervisor = tokio::spawn(supervise(config, listener, ready.clone(), jobs.clone()));
        Ok(Self {
            addr,
            ready,
            jobs,
            supervisor,
        })
    }

    /// Waits until the service stops by itself: a failed startup, or a component that
    /// ended.
    pub(crate) async fn finished(self) -> Result<(), ServiceError> {
        self.supervisor
            .await
            .expect("the supervisor does not panic")
    }

    /// Stops every component.
    pub(crate) async fn stop(self) {
        self.supervisor.abort();
        let _ = self.supervisor.await;
    }
}

/// Runs the components; returns only if startup fails or a component ends. Dropping the
/// future (aborting its task) drops the `JoinSet`, which aborts every component.
async fn supervise(
    config: Config,
    listener: TcpListener,
    ready: Arc<TrackingLatch>,
    jobs: Arc<Queue<String>>,
) -> Result<(), ServiceError> {
    let counter = |name| {
        ready
            .counter_owned(name)
            .expect("each name is claimed once")
    };
    let mut components = JoinSet::new();
    components.spawn(consumer(
        counter("consumer"),
        config.consumer_delay,
        jobs.clone(),
    ));
    components.spawn(cache_warmer(counter("cache-warmer"), config.warmup));
    components.spawn(http(listener, counter("http"), ready.clone(), jobs));

    // The outer `?` is the startup deadline (the components still pending), the inner one
    // a component that failed first.
    ready.wait_timeout(config.startup_timeout).await??;
    // Ready. The components run forever; the first one to end stops them all.
    let ended = components.join_next().await.expect("three components run");
    Err(ServiceError::ComponentExited(match ended {
        Ok(Ok(())) => "a component returned".into(),
        Ok(Err(error)) => error.to_string(),
        Err(join_error) => join_error.to_string(),
    }))
}

async fn consumer(
    ready: OwnedCounter<Infallible>,
    connect: Duration,
    jobs: Arc<Queue<String>>,
) -> io::Result<()> {
    tokio::time::sleep(connect).await; // connecting to the broker
                                       // Registered as the queue's worker: puts are refused while nobody could work them.
    let _worker = jobs.worker_owned();
    ready.report();
    while let Ok(job) = jobs.get_owned().await {
        // A job named `bad…` cannot be processed.
        if job.starts_with("bad") {
            job.reject();
        } else {
            job.succeed();
        }
    }
    pending().await
}

async fn cache_warmer(ready: OwnedCounter<Infallible>, warmup: Warmup) -> io::Result<()> {
    match warmup {
        Warmup::After(delay) => tokio::time::sleep(delay).await,
        Warmup::When(gate) => gate.wait().await,
        Warmup::Panic => panic!("cache warm-up failed: backing store unreachable"),
    }
    ready.report();
    pending().await
}

async fn http(
    listener: TcpListener,
    ready_counter: OwnedCounter<Infallible>,
    ready: Arc<TrackingLatch>,
    jobs: Arc<Queue<String>>,
) -> io::Result<()> {
    // Connections live in their own set, so stopping this component stops them too.
    let mut connections = JoinSet::new();
    ready_counter.report();
    loop {
        let (stream, _) = listener.accept().await?;
        let (ready, jobs) = (ready.clone(), jobs.clone());
        let service = service_fn(move |request| {
            let response = respond(&request, &ready, &jobs);
            async move { Ok::<_, Infallible>(response) }
        });
        connections.spawn(async move {
            // A client that hangs up mid-request is its own problem, not the service's.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        while connections.try_join_next().is_some() {}
    }
}

fn respond(
    request: &Request<Incoming>,
    ready: &TrackingLatch,
    jobs: &Queue<String>,
) -> Response<Full<Bytes>> {
    let (status, body) = match (request.method(), request.uri().path()) {
        (&Method::GET, "/healthz") => (StatusCode::OK, "ok".to_owned()),
        (&Method::GET, "/readyz") => match ready.failure() {
            Some(failure) => (StatusCode::SERVICE_UNAVAILABLE, failure.to_string()),
            None if ready.is_open() => (StatusCode::OK, "ready".to_owned()),
            None => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("waiting for: {}", ready.pending().join(", ")),
            ),
        },
        (&Method::GET, "/metrics") => (
            StatusCode::OK,
            crate::metrics::render(ready, &COMPONENTS, jobs),
        ),
        (&Method::POST, path) if path.starts_with("/jobs/") => {
            let name = path.trim_start_matches("/jobs/").to_owned();
            if ready.is_open() {
                match jobs.try_put(name) {
                    Ok(id) => (StatusCode::ACCEPTED, id.to_string()),
                    Err(refused) => (StatusCode::SERVICE_UNAVAILABLE, refused.to_string()),
                }
            } else {
                (StatusCode::SERVICE_UNAVAILABLE, "not ready".to_owned())
            }
        }
        _ => (StatusCode::NOT_FOUND, "not found".to_owned()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
}

/// A minimal HTTP/1.1 client: `GET path` on a fresh connection; returns the status code
/// and the body.
pub(crate) async fn get(addr: SocketAddr, path: &str) -> io::Result<(u16, String)> {
    request(addr, "GET", path).await
}

/// `POST path` with an empty body, as [`get`] does.
pub(crate) async fn post(addr: SocketAddr, path: &str) -> io::Result<(u16, String)> {
    request(addr, "POST", path).await
}

async fn request(addr: SocketAddr, method: &str, path: &str) -> io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let text = String::from_utf8(raw).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let invalid = || io::Error::new(io::ErrorKind::InvalidData, "not an HTTP/1.1 response");
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(invalid)?;
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|line| line.get(..3))
        .and_then(|code| code.parse().ok())
        .ok_or_else(invalid)?;
    Ok((status, body.to_owned()))
}
