//! One replica of a service whose `/readyz` has two gates: its own components, on an
//! in-process [`tally_latch::TrackingLatch`], and a migration that runs once for the whole
//! cluster, on a [`tally_redis::TrackingLatch`] every replica opens.
//!
//! The local components (`cache-warmer`, `http`) run in a [`JoinSet`] and report as in the
//! in-process readiness demo; a startup that misses its deadline, or a component that
//! ends, stops the replica. The cluster latch `NAME` has one counter, `migration`, which
//! this service never claims: the migration job claims it and reports it
//! ([`crate::migration`]). A watcher task waits on the cluster latch and keeps its verdict
//! once it is final (an open or failed latch stays so), and `/readyz` reads the latch's
//! state until then.
//!
//! `/healthz` is 200 from the start. `/readyz` is 200 `ready` when both gates are open;
//! otherwise 503 with what is missing, local and cluster counters marked as such
//! (`waiting for: cache-warmer (local), migration (cluster)`), or with the failure: a
//! local component's, or the cluster latch's (``cluster latch `deploy`: counter `migration`
//! failed: its lease expired before it reported (holder `…` died or stalled)`` when the
//! migrating process died), or the cluster latch unreachable. A failed migration leaves
//! every replica up and unready, saying why on `/readyz`: it does not stop them, so the
//! answer stays visible to whoever probes.

use std::convert::Infallible;
use std::fmt;
use std::future::{pending, Future};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tally_latch::{Failure, OwnedCounter, StillPending, TrackingLatch};
use tally_redis::{CreateError, LatchOptions, LatchState, LatchWaitError, Reason};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// The local components, in the order `/readyz` lists the pending ones.
pub(crate) const COMPONENTS: [&str; 2] = ["cache-warmer", "http"];

/// The cluster latch's one counter.
pub(crate) const MIGRATION: &str = "migration";

/// Opens the cluster latch `name` (creating it if no replica did yet). Every process must
/// open it with the same lease and expiry policy.
pub(crate) async fn open_cluster(
    client: redis::Client,
    name: &str,
    options: LatchOptions,
) -> Result<tally_redis::TrackingLatch, CreateError> {
    tally_redis::TrackingLatch::open(client, name, [MIGRATION], options).await
}

/// The cache warmer's work: it is ready once this completes.
pub(crate) type Warmup = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What to start.
pub(crate) struct Config {
    /// Where to listen; port 0 picks a free one.
    pub(crate) addr: SocketAddr,
    /// The Redis server the cluster latch lives on.
    pub(crate) redis: redis::Client,
    /// The cluster latch's name.
    pub(crate) cluster: String,
    /// The cluster latch's options (the lease must match every other process's).
    pub(crate) options: LatchOptions,
    /// How the cache warmer comes up.
    pub(crate) warmup: Warmup,
    /// How long the local components may take before the replica gives up.
    pub(crate) startup_timeout: Duration,
    /// Print each local component's and the cluster latch's readiness as it comes.
    pub(crate) verbose: bool,
}

/// Why the service did not start.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The listener could not be bound.
    Bind(io::Error),
    /// The cluster latch could not be opened (unreachable, or opened elsewhere with other
    /// names or options).
    Cluster(CreateError),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bind(error) => write!(f, "cannot listen: {error}"),
            Self::Cluster(error) => write!(f, "cannot open the cluster latch: {error}"),
        }
    }
}

impl std::error::Error for StartError {}

/// Why the service stopped.
#[derive(Debug)]
pub(crate) enum ServiceError {
    /// The startup deadline passed; names the local components that never reported.
    StartupTimedOut(StillPending),
    /// A local component dropped its counter before reporting.
    StartupFailed(Failure<Infallible>),
    /// A component ended (they are meant to run forever), so everything stopped.
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

/// The cluster latch as this replica sees it.
#[derive(Debug)]
pub(crate) enum ClusterState {
    /// Every cluster counter reported.
    Open,
    /// The first failure.
    Failed(Failure<Reason>),
    /// The cluster counters that have not reported.
    Waiting(Vec<String>),
    /// The state could not be read.
    Unreachable(tally_redis::Error),
}

/// The cluster gate: the latch and, once it is final, its verdict.
#[derive(Debug)]
pub(crate) struct ClusterGate {
    latch: tally_redis::TrackingLatch,
    /// `Ok` once the latch opened, `Err` once it failed; both are final.
    verdict: Mutex<Option<Result<(), Failure<Reason>>>>,
}

impl ClusterGate {
    fn new(latch: tally_redis::TrackingLatch) -> Self {
        Self {
            latch,
            verdict: Mutex::new(None),
        }
    }

    /// The cluster latch's name.
    pub(crate) fn name(&self) -> &str {
        self.latch.name()
    }

    fn settle(&self, verdict: Result<(), Failure<Reason>>) -> ClusterState {
        let mut slot = self.verdict.lock().unwrap_or_else(PoisonError::into_inner);
        let verdict = slot.get_or_insert(verdict);
        match verdict {
            Ok(()) => ClusterState::Open,
            Err(failure) => ClusterState::Failed(failure.clone()),
        }
    }

    /// The verdict if final, or else one snapshot of the latch (which also sweeps expired
    /// leases, so a dead migration is noticed by the probe itself).
    pub(crate) async fn state(&self) -> ClusterState {
        let settled = self
            .verdict
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(verdict) = settled {
            return self.settle(verdict);
        }
        match self.latch.snapshot().await {
            Ok(snapshot) => match (snapshot.state, snapshot.failure) {
                (LatchState::Open, _) => self.settle(Ok(())),
                (LatchState::Failed, Some(failure)) => self.settle(Err(failure)),
                (LatchState::Failed, None) => ClusterState::Unreachable(
                    tally_redis::Error::Protocol("a failed latch without a failure".into()),
                ),
                (LatchState::Waiting, _) => ClusterState::Waiting(
                    snapshot
                        .counters
                        .into_iter()
                        .filter(|(_, state)| state.is_pending())
                        .map(|(name, _)| name)
                        .collect(),
                ),
            },
            Err(error) => ClusterState::Unreachable(error),
        }
    }

    /// Waits on the cluster latch until it opens or fails, through transport failures
    /// (waiting again is safe), and keeps the verdict.
    async fn watch(self: Arc<Self>, verbose: bool) -> io::Result<()> {
        let verdict = loop {
            match self.latch.wait().await {
                Ok(()) => break Ok(()),
                Err(LatchWaitError::Failed(failure)) => break Err(failure),
                Err(error) => {
                    if verbose {
                        println!("  cluster latch `{}`: {error}; waiting again", self.name());
                    }
                    tokio::time::sleep(self.latch.options().get_poll()).await;
                }
            }
        };
        if verbose {
            match &verdict {
                Ok(()) => println!("  cluster latch `{}` is open", self.name()),
                Err(failure) => println!("  cluster latch `{}`: {failure}", self.name()),
            }
        }
        self.settle(verdict);
        // The watcher's work is done; it must not end the replica.
        pending().await
    }
}

/// A running replica.
#[derive(Debug)]
pub(crate) struct Service {
    /// The address `/healthz` and `/readyz` are served on.
    pub(crate) addr: SocketAddr,
    supervisor: JoinHandle<Result<(), ServiceError>>,
}

impl Service {
    /// Binds the listener, opens the cluster latch and starts the components; returns at
    /// once, before any is ready.
    pub(crate) async fn start(config: Config) -> Result<Self, StartError> {
        let listener = TcpListener::bind(config.addr)
            .await
            .map_err(StartError::Bind)?;
        let addr = listener.local_addr().map_err(StartError::Bind)?;
        let cluster = open_cluster(config.redis.clone(), &config.cluster, config.options)
            .await
            .map_err(StartError::Cluster)?;
        let cluster = Arc::new(ClusterGate::new(cluster));
        let mut latch = TrackingLatch::new(COMPONENTS)
            .expect("the names are distinct")
            .with_label("readiness");
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
        let local = Arc::new(latch);
        let supervisor = tokio::spawn(supervise(config, listener, local, cluster));
        Ok(Self { addr, supervisor })
    }

    /// Waits until the replica stops by itself: a failed startup, or a component that
    /// ended.
    pub(crate) async fn finished(self) -> Result<(), ServiceError> {
        self.supervisor
            .await
            .expect("the supervisor does not panic")
    }
}

/// Runs the components; returns only if the local startup fails or a component ends.
/// Dropping the future (aborting its task) drops the `JoinSet`, which aborts every
/// component.
async fn supervise(
    config: Config,
    listener: TcpListener,
    local: Arc<TrackingLatch>,
    cluster: Arc<ClusterGate>,
) -> Result<(), ServiceError> {
    let counter = |name| {
        local
            .counter_owned(name)
            .expect("each name is claimed once")
    };
    let mut components = JoinSet::new();
    components.spawn(cache_warmer(counter("cache-warmer"), config.warmup));
    components.spawn(http(
        listener,
        counter("http"),
        local.clone(),
        cluster.clone(),
    ));
    components.spawn(cluster.watch(config.verbose));

    // The outer match is the local startup deadline, the inner one a component that
    // failed first. The cluster gate has no deadline here: `/readyz` says what it waits for.
    match local
        .wait_until(tokio::time::sleep(config.startup_timeout))
        .await
    {
        Err(pending) => return Err(ServiceError::StartupTimedOut(pending)),
        Ok(Err(failure)) => return Err(ServiceError::StartupFailed(failure)),
        Ok(Ok(())) => {}
    }
    let ended = components.join_next().await.expect("three components run");
    Err(ServiceError::ComponentExited(match ended {
        Ok(Ok(())) => "a component returned".into(),
        Ok(Err(error)) => error.to_string(),
        Err(join_error) => join_error.to_string(),
    }))
}

async fn cache_warmer(ready: OwnedCounter<Infallible>, warmup: Warmup) -> io::Result<()> {
    warmup.await;
    ready.report();
    pending().await
}

async fn http(
    listener: TcpListener,
    ready_counter: OwnedCounter<Infallible>,
    local: Arc<TrackingLatch>,
    cluster: Arc<ClusterGate>,
) -> io::Result<()> {
    // Connections live in their own set, so stopping this component stops them too.
    let mut connections = JoinSet::new();
    ready_counter.report();
    loop {
        let (stream, _) = listener.accept().await?;
        let (local, cluster) = (local.clone(), cluster.clone());
        let service = service_fn(move |request: Request<Incoming>| {
            let (local, cluster) = (local.clone(), cluster.clone());
            async move { Ok::<_, Infallible>(respond(&request, &local, &cluster).await) }
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

/// `/readyz`: 200 `ready` when both gates are open, else 503 with every failure, then
/// what is still missing.
pub(crate) async fn readiness(local: &TrackingLatch, cluster: &ClusterGate) -> (u16, String) {
    let cluster_state = cluster.state().await;
    let mut problems = Vec::new();
    if let Some(failure) = local.failure() {
        problems.push(failure.to_string());
    }
    let mut missing: Vec<String> = local
        .pending()
        .into_iter()
        .map(|name| format!("{name} (local)"))
        .collect();
    match cluster_state {
        ClusterState::Open => {}
        ClusterState::Failed(failure) => {
            problems.push(format!("cluster latch `{}`: {failure}", cluster.name()));
        }
        ClusterState::Unreachable(error) => {
            problems.push(format!(
                "cluster latch `{}` unreachable: {error}",
                cluster.name()
            ));
        }
        ClusterState::Waiting(names) => {
            missing.extend(names.into_iter().map(|name| format!("{name} (cluster)")));
        }
    }
    if !missing.is_empty() {
        problems.push(format!("waiting for: {}", missing.join(", ")));
    }
    if problems.is_empty() {
        (200, "ready".to_owned())
    } else {
        (503, problems.join("; "))
    }
}

async fn respond(
    request: &Request<Incoming>,
    local: &TrackingLatch,
    cluster: &ClusterGate,
) -> Response<Full<Bytes>> {
    let (status, body) = match (request.method(), request.uri().path()) {
        (&Method::GET, "/healthz") => (StatusCode::OK, "ok".to_owned()),
        (&Method::GET, "/readyz") => {
            let (code, body) = readiness(local, cluster).await;
            let status = StatusCode::from_u16(code).expect("200 or 503");
            (status, body)
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
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
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
