//! The cluster readiness demo (`examples/cluster_readiness`) against a real `redis-server`:
//! two service replicas and the migration job, each in its own process (the test binary
//! re-run in a role), probed over real HTTP on loopback. The demo is a tokio service, so
//! these tests run on tokio only.
//!
//! A child's stdin is a pipe from the test: a replica's cache warmer reports at the first
//! line, and the migration finishes at the first line, so the test decides each moment. A
//! child whose stdin closes (the test ended or died) exits.

mod common;
#[path = "../examples/cluster_readiness/migration.rs"]
mod migration;
#[path = "../examples/cluster_readiness/service.rs"]
mod service;

use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Stdio};
use std::time::{Duration, Instant};

use common::{report, Reader, Rt, Server, NAME, ROLE, SOCK};
use service::{get, Config, Service, MIGRATION};
use tally_redis::LatchOptions;

/// Child processes enter here (see `run_if_child`); outside a child this does nothing.
#[test]
fn child_role_entry() {
    run_if_child();
}

/// A bound on every wait for a child or an answer, far above what they need.
const LIMIT: Duration = Duration::from_secs(20);
/// How long past the lease a dead migration may take to show on `/readyz`: the sweep runs
/// at the next probe (every 10 ms here), plus an HTTP round trip and a script.
const MARGIN: Duration = Duration::from_millis(500);

/// Every process's cluster latch options: a 500 ms lease, renewed every third of it.
fn options() -> LatchOptions {
    LatchOptions::new()
        .lease(Duration::from_millis(500))
        .poll(Duration::from_millis(50))
        .response_timeout(Duration::from_millis(500))
}

// ---- the child roles -------------------------------------------------------------------

fn run_if_child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let client = redis::Client::open(std::env::var(SOCK).unwrap()).unwrap();
    let latch = std::env::var(NAME).unwrap();
    let go = stdin_gate();
    Rt::Tokio.block_on(async {
        match role.as_str() {
            "cluster_service" => serve(client, latch, go).await,
            "cluster_migration" => migrate(client, latch, go).await,
            other => panic!("unknown role {other}"),
        }
    });
}

/// A future that completes at the first line on stdin; at the end of stdin the process
/// exits.
fn stdin_gate() -> tokio::sync::oneshot::Receiver<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut lines = std::io::stdin().lock().lines();
        if let Some(Ok(_)) = lines.next() {
            tx.send(()).ok();
            while let Some(Ok(_)) = lines.next() {}
        }
        std::process::exit(0);
    });
    rx
}

/// A replica: its cache warmer reports at the first line on stdin.
async fn serve(client: redis::Client, latch: String, go: tokio::sync::oneshot::Receiver<()>) {
    let service = Service::start(Config {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        redis: client,
        cluster: latch,
        options: options(),
        warmup: Box::pin(async {
            go.await.ok();
        }),
        startup_timeout: LIMIT * 3,
        verbose: false,
    })
    .await
    .unwrap();
    report(format!("LISTENING {}", service.addr));
    let error = service.finished().await.unwrap_err();
    report(format!("STOPPED {error}"));
}

/// The migration: claims `migration`, says so with its holder id, and reports at the
/// first line on stdin.
async fn migrate(client: redis::Client, latch: String, go: tokio::sync::oneshot::Receiver<()>) {
    let latch = service::open_cluster(client, &latch, options())
        .await
        .unwrap();
    let claimed = |counter: &tally_redis::Counter| report(format!("CLAIMED {}", counter.holder()));
    let work = async {
        go.await.ok();
        Ok(())
    };
    match migration::run(&latch, MIGRATION, claimed, work).await {
        Ok(done) => report(format!("MIGRATED {done:?}")),
        Err(error) => report(format!("REFUSED {error}")),
    }
}

// ---- the parent's side -----------------------------------------------------------------

/// A child process in a role, killed (SIGKILL) and reaped on drop, so a failing test
/// leaves none behind.
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    reader: Reader,
}

impl Proc {
    fn spawn(server: &Server, latch: &str, role: &str) -> Proc {
        let mut child = common::child_command(server, latch, role, Rt::Tokio)
            .stdin(Stdio::piped())
            .spawn()
            .expect("spawn child");
        let stdin = child.stdin.take();
        let reader = Reader::new(&mut child);
        Proc {
            child,
            stdin,
            reader,
        }
    }

    /// A replica, and the address it serves on.
    fn service(server: &Server, latch: &str) -> (Proc, SocketAddr) {
        let proc = Proc::spawn(server, latch, "cluster_service");
        let line = proc.reader.until("LISTENING ", LIMIT).pop().unwrap();
        let addr = line["LISTENING ".len()..].parse().expect("an address");
        (proc, addr)
    }

    /// Releases the child's gate (a replica's cache warmer, the migration's work).
    fn go(&mut self) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "go").expect("write to the child");
        stdin.flush().expect("flush");
    }

    /// `kill -9` and reap.
    fn kill9(&mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reap");
    }

    /// Waits for the child to exit by itself; whether it succeeded.
    fn exits_ok(&mut self) -> bool {
        common::wait(&mut self.child, LIMIT).success()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

const BOTH: &str = "waiting for: cache-warmer (local), migration (cluster)";
const LOCAL: &str = "waiting for: cache-warmer (local)";
const CLUSTER: &str = "waiting for: migration (cluster)";

async fn readyz(addr: SocketAddr) -> (u16, String) {
    get(addr, "/readyz").await.expect("the probe answers")
}

/// Probes `/readyz` every 10 ms until it answers `until`, failing after `LIMIT` or at
/// any other answer than `on_the_way`. Returns when the answer came.
async fn probe_until(addr: SocketAddr, until: (u16, &str), on_the_way: &[(u16, &str)]) -> Instant {
    let start = Instant::now();
    loop {
        let (status, body) = readyz(addr).await;
        if (status, body.as_str()) == until {
            return Instant::now();
        }
        assert!(
            on_the_way.contains(&(status, body.as_str())),
            "{addr}: {status} {body:?} on the way to {until:?}"
        );
        assert!(start.elapsed() < LIMIT, "{addr}: stuck at {status} {body}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Probes `/readyz` a few times over `span`, each answer `expect`.
async fn stays(addr: SocketAddr, expect: (u16, &str), span: Duration) {
    let start = Instant::now();
    while start.elapsed() < span {
        let (status, body) = readyz(addr).await;
        assert_eq!((status, body.as_str()), expect, "{addr}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Both replicas answer 503 naming what each misses (local, cluster, or both) until the
/// migration reports, then 200 once their own components are up too; a second migration
/// run finds it done.
async fn replicas_open_after_the_migration_reports() {
    let server = server!();
    let (mut a, a_addr) = Proc::service(&server, "deploy");
    let (mut b, b_addr) = Proc::service(&server, "deploy");
    for addr in [a_addr, b_addr] {
        assert_eq!(get(addr, "/healthz").await.unwrap(), (200, "ok".into()));
        // `http` reports before the first connection is served: only the cache warmer
        // and the migration are missing.
        assert_eq!(readyz(addr).await, (503, BOTH.into()));
    }

    // A's cache is warm: it waits on the cluster only; B still on both.
    a.go();
    probe_until(a_addr, (503, CLUSTER), &[(503, BOTH)]).await;
    assert_eq!(readyz(b_addr).await, (503, BOTH.into()));

    // The migration claims its counter and works for longer than a lease: the heartbeat
    // keeps the claim, so nobody sees a failure.
    let mut job = Proc::spawn(&server, "deploy", "cluster_migration");
    let claimed = job.reader.until("CLAIMED ", LIMIT).pop().unwrap();
    assert!(claimed.len() > "CLAIMED ".len(), "{claimed}");
    let span = options().get_lease() * 2;
    let (_, _) = tokio::join!(
        stays(a_addr, (503, CLUSTER), span),
        stays(b_addr, (503, BOTH), span)
    );

    // It reports: A opens, B now waits for its own cache only.
    job.go();
    assert_eq!(job.reader.until("MIGRATED ", LIMIT), ["MIGRATED Done"]);
    assert!(job.exits_ok());
    probe_until(a_addr, (200, "ready"), &[(503, CLUSTER)]).await;
    probe_until(b_addr, (503, LOCAL), &[(503, BOTH)]).await;
    b.go();
    probe_until(b_addr, (200, "ready"), &[(503, LOCAL)]).await;
    for addr in [a_addr, b_addr] {
        stays(addr, (200, "ready"), Duration::from_millis(100)).await;
        assert_eq!(get(addr, "/nope").await.unwrap().0, 404);
    }

    // Running the migration again does nothing.
    let mut again = Proc::spawn(&server, "deploy", "cluster_migration");
    assert_eq!(
        again.reader.until("MIGRATED ", LIMIT),
        ["MIGRATED AlreadyDone"]
    );
    assert!(again.exits_ok());
    for addr in [a_addr, b_addr] {
        assert_eq!(readyz(addr).await, (200, "ready".into()));
    }
    a.kill9();
    b.kill9();
}

/// The migration killed with SIGKILL before it reports: within a lease (plus a margin)
/// both replicas' `/readyz` answer 503 with the cluster latch's failure, naming
/// `migration` and the dead holder; they stay up, and a new migration run is refused.
async fn a_killed_migration_fails_both_replicas_naming_it() {
    let server = server!();
    let (mut a, a_addr) = Proc::service(&server, "deploy");
    let (mut b, b_addr) = Proc::service(&server, "deploy");
    a.go();
    b.go();
    for addr in [a_addr, b_addr] {
        probe_until(addr, (503, CLUSTER), &[(503, BOTH)]).await;
    }
    let mut job = Proc::spawn(&server, "deploy", "cluster_migration");
    let claimed = job.reader.until("CLAIMED ", LIMIT).pop().unwrap();
    let holder = claimed["CLAIMED ".len()..].to_string();
    // Alive past one lease: still only waiting.
    let span = options().get_lease() * 2;
    let (_, _) = tokio::join!(
        stays(a_addr, (503, CLUSTER), span),
        stays(b_addr, (503, CLUSTER), span)
    );

    job.kill9();
    let killed = Instant::now();
    let failed = format!(
        "cluster latch `deploy`: counter `migration` failed: its lease expired before it \
         reported (holder `{holder}` died or stalled)"
    );
    let (a_at, b_at) = tokio::join!(
        probe_until(a_addr, (503, &failed), &[(503, CLUSTER)]),
        probe_until(b_addr, (503, &failed), &[(503, CLUSTER)])
    );
    // One lease, plus at most one more when a delayed command looked like a step of the
    // server's clock (expiry is then held off for a lease).
    let bound = options().get_lease() * 2 + MARGIN;
    for (replica, at) in [("a", a_at), ("b", b_at)] {
        let took = at - killed;
        assert!(
            took <= bound,
            "replica {replica} saw the failure {took:?} after the kill (bound {bound:?})"
        );
    }

    // Final: the replicas stay up and keep saying why they are not ready.
    for addr in [a_addr, b_addr] {
        stays(addr, (503, &failed), Duration::from_millis(200)).await;
        assert_eq!(get(addr, "/healthz").await.unwrap(), (200, "ok".into()));
    }
    let mut again = Proc::spawn(&server, "deploy", "cluster_migration");
    let refused = again.reader.until("REFUSED ", LIMIT).pop().unwrap();
    assert_eq!(
        refused,
        format!(
            "REFUSED the cluster latch failed earlier: counter `migration` \
             failed: its lease expired before it reported (holder `{holder}` died or stalled)"
        )
    );
    assert!(again.exits_ok());
    a.kill9();
    b.kill9();
}

/// Redis down while the migration is pending: both replicas answer 503 saying the cluster
/// latch is unreachable, and go back to waiting when the server is back (its AOF kept
/// the latch). Redis down after the latch opened: both stay 200, on the verdict they kept.
async fn replicas_ride_out_a_redis_outage() {
    let mut server = server!();
    let (mut a, a_addr) = Proc::service(&server, "deploy");
    let (mut b, b_addr) = Proc::service(&server, "deploy");
    a.go();
    b.go();
    for addr in [a_addr, b_addr] {
        probe_until(addr, (503, CLUSTER), &[(503, BOTH)]).await;
    }

    server.kill9();
    let unreachable = "cluster latch `deploy` unreachable: ";
    for addr in [a_addr, b_addr] {
        let start = Instant::now();
        loop {
            let (status, body) = readyz(addr).await;
            assert_eq!(status, 503, "{addr}: {body}");
            if body.starts_with(unreachable) {
                break;
            }
            assert_eq!(body, CLUSTER, "{addr}");
            assert!(start.elapsed() < LIMIT, "{addr}: stuck at {body}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(get(addr, "/healthz").await.unwrap(), (200, "ok".into()));
    }

    server.restart();
    for addr in [a_addr, b_addr] {
        let start = Instant::now();
        loop {
            let (status, body) = readyz(addr).await;
            assert_eq!(status, 503, "{addr}: {body}");
            if body == CLUSTER {
                break;
            }
            assert!(body.starts_with(unreachable), "{addr}: {body}");
            assert!(start.elapsed() < LIMIT, "{addr}: stuck at {body}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let mut job = Proc::spawn(&server, "deploy", "cluster_migration");
    job.reader.until("CLAIMED ", LIMIT);
    job.go();
    assert_eq!(job.reader.until("MIGRATED ", LIMIT), ["MIGRATED Done"]);
    assert!(job.exits_ok());
    for addr in [a_addr, b_addr] {
        probe_until(addr, (200, "ready"), &[(503, CLUSTER)]).await;
    }

    server.kill9();
    for addr in [a_addr, b_addr] {
        stays(addr, (200, "ready"), Duration::from_millis(300)).await;
    }
    a.kill9();
    b.kill9();
}

#[test]
fn replicas_open_after_the_migration_reports_tokio() {
    Rt::Tokio.block_on(replicas_open_after_the_migration_reports());
}

#[test]
fn a_killed_migration_fails_both_replicas_naming_it_tokio() {
    Rt::Tokio.block_on(a_killed_migration_fails_both_replicas_naming_it());
}

#[test]
fn replicas_ride_out_a_redis_outage_tokio() {
    Rt::Tokio.block_on(replicas_ride_out_a_redis_outage());
}
