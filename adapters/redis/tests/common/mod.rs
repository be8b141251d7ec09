//! The test harness: a `redis-server` per test, runtimes, child processes.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tally_redis::{AbandonPolicy, Bytes, Options, Queue};

pub mod latch_roles;
pub mod proxy;
pub mod roles;

/// The environment variable that makes the test binary run a child role.
pub const ROLE: &str = "TALLY_REDIS_ROLE";
/// The server's socket, for a child.
pub const SOCK: &str = "TALLY_REDIS_SOCK";
/// The queue's name, for a child.
pub const NAME: &str = "TALLY_REDIS_QUEUE";
/// `tokio` or `smol`, for a child.
pub const RUNTIME: &str = "TALLY_REDIS_RUNTIME";

/// One `redis-server` child, on a Unix socket in its own temp dir. By default AOF is
/// fsynced on every write, there are no snapshots and no eviction: the settings under
/// which the queue's promises hold. It is killed and its dir removed on drop.
pub struct Server {
    pub dir: PathBuf,
    pub sock: PathBuf,
    child: Option<Child>,
    /// Settings that replace or add to the defaults, as `--name value` pairs.
    settings: Vec<(String, String)>,
    /// The file the clock-step shim reads, if the server runs under it.
    clock: Option<PathBuf>,
}

/// The settings every test server starts with (each may be replaced).
const DEFAULTS: [(&str, &str); 4] = [
    ("appendonly", "yes"),
    ("appendfsync", "always"),
    ("save", ""),
    ("maxmemory-policy", "noeviction"),
];

fn redis_server_present() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|status| status.success())
        .unwrap_or(false)
}

/// Whether a program the tests need is here; if not, says so loudly, and fails under
/// `CI=true` (where every test must run).
fn required(present: bool, what: &str, install: &str) -> bool {
    if present {
        return true;
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{what} is not installed, and CI=true: install it ({install})");
    }
    // Straight to the process's stderr: libtest captures `eprintln!` of passing tests, and
    // this notice must show.
    use std::io::Write;
    writeln!(
        std::io::stderr(),
        "\n*** SKIPPED: {what} is not installed ({install}); this test did not run ***\n"
    )
    .ok();
    false
}

/// The clock-step shim (`clock_step.c`), built once per test binary with the system's C
/// compiler; `None` if there is none.
fn clock_shim() -> Option<&'static PathBuf> {
    static SHIM: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    SHIM.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tally-redis-shim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let out = dir.join("libclockstep.so");
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join("common")
            .join("clock_step.c");
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let built = Command::new(cc)
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&out)
            .arg(&source)
            .status()
            .is_ok_and(|status| status.success());
        built.then_some(out)
    })
    .as_ref()
}

impl Server {
    /// Starts a server with the default settings, or returns `None` (with a loud notice)
    /// if `redis-server` is not installed. Under `CI=true` a missing server fails the test.
    pub fn start() -> Option<Server> {
        Server::start_with(&[])
    }

    /// Starts a server with `settings` (`("maxmemory", "2mb")`, ...) replacing or adding
    /// to the defaults.
    pub fn start_with(settings: &[(&str, &str)]) -> Option<Server> {
        if !required(
            redis_server_present(),
            "redis-server",
            "apt-get install redis-server",
        ) {
            return None;
        }
        let mut server = Server::new(settings);
        server.spawn();
        Some(server)
    }

    /// Starts a server whose wall clock [`step_clock`](Server::step_clock) can step, under
    /// a shim preloaded into it (built with the system's C compiler).
    pub fn start_with_clock(settings: &[(&str, &str)]) -> Option<Server> {
        if !required(
            redis_server_present(),
            "redis-server",
            "apt-get install redis-server",
        ) {
            return None;
        }
        if !required(
            clock_shim().is_some(),
            "a C compiler (cc)",
            "apt-get install gcc",
        ) {
            return None;
        }
        let mut server = Server::new(settings);
        let clock = server.dir.join("clock-step");
        std::fs::write(&clock, 0i64.to_le_bytes()).expect("clock file");
        server.clock = Some(clock);
        server.spawn();
        Some(server)
    }

    fn new(settings: &[(&str, &str)]) -> Server {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tally-redis-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let sock = dir.join("redis.sock");
        let mut all: Vec<(String, String)> = DEFAULTS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for (key, value) in settings {
            match all.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value.to_string(),
                None => all.push((key.to_string(), value.to_string())),
            }
        }
        Server {
            dir,
            sock,
            child: None,
            settings: all,
            clock: None,
        }
    }

    fn spawn(&mut self) {
        let _ = std::fs::remove_file(&self.sock);
        let mut cmd = Command::new("redis-server");
        cmd.args(["--port", "0", "--unixsocket"])
            .arg(&self.sock)
            .arg("--dir")
            .arg(&self.dir)
            .args(["--daemonize", "no", "--logfile", "redis.log"]);
        for (key, value) in &self.settings {
            cmd.arg(format!("--{key}")).arg(value);
        }
        if let (Some(clock), Some(shim)) = (&self.clock, clock_shim()) {
            cmd.env("LD_PRELOAD", shim)
                .env("TALLY_CLOCK_STEP_FILE", clock);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        self.wait_for_ping();
    }

    /// Steps the server's wall clock to `ms` milliseconds from the true time (a server
    /// started with [`start_with_clock`](Server::start_with_clock)).
    pub fn step_clock(&self, ms: i64) {
        let clock = self
            .clock
            .as_ref()
            .expect("a server started with its clock shim");
        std::fs::write(clock, ms.to_le_bytes()).expect("step the clock");
    }

    /// Runs one command on a fresh connection.
    pub fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> T {
        let mut con = self.client().get_connection().expect("connection");
        cmd.query(&mut con).expect("query")
    }

    /// A field of `INFO`, as text.
    pub fn info_field(&self, field: &str) -> String {
        let info: String = self.query(redis::cmd("INFO").arg("everything"));
        info.lines()
            .find_map(|line| line.strip_prefix(&format!("{field}:")))
            .unwrap_or_else(|| panic!("no {field} in INFO"))
            .trim()
            .to_string()
    }

    /// Commands the server has run since it started, from `INFO commandstats`.
    pub fn commands_run(&self) -> u64 {
        let info: String = self.query(redis::cmd("INFO").arg("commandstats"));
        info.lines()
            .filter_map(|line| line.split("calls=").nth(1))
            .filter_map(|rest| rest.split(',').next()?.parse::<u64>().ok())
            .sum()
    }

    fn wait_for_ping(&self) {
        let start = Instant::now();
        let client = self.client();
        loop {
            let ok = client
                .get_connection_with_timeout(Duration::from_millis(200))
                .and_then(|mut con| redis::cmd("PING").query::<String>(&mut con));
            // A server that needs a password is up once it refuses the unauthenticated.
            if ok.is_ok() || ok.as_ref().is_err_and(|e| e.to_string().contains("NOAUTH")) {
                return;
            }
            if start.elapsed() > Duration::from_secs(5) {
                panic!("redis-server did not answer PING within 5 s: {ok:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server running").id()
    }

    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.sock.display())
    }

    pub fn client(&self) -> redis::Client {
        redis::Client::open(self.url()).expect("client")
    }

    /// `kill -9` and reap.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().ok();
            child.wait().ok();
        }
    }

    /// Stops the process (SIGSTOP): commands are received but not answered until `resume`.
    pub fn pause(&self) {
        signal(self.pid(), "STOP");
    }

    pub fn resume(&self) {
        signal(self.pid(), "CONT");
    }

    /// Starts the server again on the same dir (its AOF).
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "kill the server first");
        self.spawn();
    }
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid} failed");
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            signal(child.id(), "CONT");
        }
        self.kill9();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts a server or returns from the test (skipped, with a notice): `server!()` with the
/// default settings, `server!("maxmemory" => "2mb", ...)` with these replacing or adding
/// to them.
#[macro_export]
macro_rules! server {
    ($($key:literal => $value:literal),* $(,)?) => {
        match $crate::common::Server::start_with(&[$(($key, $value)),*]) {
            Some(server) => server,
            None => return,
        }
    };
}

/// As [`server!`], on a server whose wall clock the test can step.
#[macro_export]
macro_rules! clock_server {
    ($($key:literal => $value:literal),* $(,)?) => {
        match $crate::common::Server::start_with_clock(&[$(($key, $value)),*]) {
            Some(server) => server,
            None => return,
        }
    };
}

/// Makes one test of each body (an `async fn(Rt)`), which runs it on tokio and on smol at
/// once (see [`on_both_runtimes`]).
#[macro_export]
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn tokio_and_smol() {
                $crate::common::on_both_runtimes(stringify!($name), super::$name);
            }
        }
    )*};
}

/// Runs `body` on tokio (here) and on smol (on a thread of its own) at the same time, and
/// fails if either fails, naming it. The two halves are apart (each starts its own
/// server); running them at once keeps the suite's wall time down, since most of it is
/// waiting (leases, polls, child processes), not work.
pub fn on_both_runtimes<F, Fut>(name: &str, body: F)
where
    F: Fn(Rt) -> Fut + Send + Copy + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let smol = std::thread::Builder::new()
        .name(format!("{name} on smol"))
        .spawn(move || Rt::Smol.block_on(body(Rt::Smol)))
        .expect("spawn the smol half");
    let tokio = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Rt::Tokio.block_on(body(Rt::Tokio))
    }));
    let smol = smol.join();
    for (runtime, outcome) in [("tokio", tokio), ("smol", smol)] {
        if let Err(panic) = outcome {
            use std::io::Write;
            writeln!(std::io::stderr(), "{name} failed on {runtime}").ok();
            std::panic::resume_unwind(panic);
        }
    }
}

/// The runtime a test body runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rt {
    Tokio,
    Smol,
}

impl Rt {
    pub fn block_on<F: std::future::Future>(self, future: F) -> F::Output {
        match self {
            Rt::Tokio => tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("tokio runtime")
                .block_on(future),
            Rt::Smol => smol::block_on(future),
        }
    }

    /// Runs `future` as a task of this runtime; the handle's output is the future's.
    pub fn spawn<T: Send + 'static>(
        self,
        future: impl std::future::Future<Output = T> + Send + 'static,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>> {
        match self {
            Rt::Tokio => {
                let task = tokio::spawn(future);
                Box::pin(async move { task.await.expect("task") })
            }
            Rt::Smol => Box::pin(smol::spawn(future)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Rt::Tokio => "tokio",
            Rt::Smol => "smol",
        }
    }

    pub fn from_env() -> Rt {
        match std::env::var(RUNTIME).as_deref() {
            Ok("smol") => Rt::Smol,
            _ => Rt::Tokio,
        }
    }
}

/// A runtime-neutral sleep (async-io's timer works under both).
pub async fn sleep(duration: Duration) {
    async_io::Timer::after(duration).await;
}

/// A deadline future.
pub fn after(duration: Duration) -> async_io::Timer {
    async_io::Timer::after(duration)
}

/// Test options: short leases and polls.
pub fn options() -> Options {
    Options::new()
        .lease(Duration::from_millis(300))
        .poll(Duration::from_millis(50))
        .response_timeout(Duration::from_millis(500))
}

pub fn redeliver(max_attempts: u32) -> Options {
    options().abandon_policy(AbandonPolicy::redeliver(max_attempts).expect("at least 1 attempt"))
}

pub fn uncertain() -> Options {
    options().abandon_policy(AbandonPolicy::Uncertain)
}

/// Opens a byte queue.
pub async fn open(server: &Server, name: &str, options: Options) -> Queue<Bytes> {
    Queue::open(server.client(), name, Bytes, options)
        .await
        .expect("open")
}

/// The command that re-runs this test binary as a child in `role`, against this server
/// and the queue or latch `name`, on `rt`: stdout piped (for a [`Reader`]), stderr
/// inherited, stdin left to the caller.
pub fn child_command(server: &Server, name: &str, role: &str, rt: Rt) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([
        "--exact",
        "child_role_entry",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(ROLE, role)
    .env(SOCK, server.url())
    .env(NAME, name)
    .env(RUNTIME, rt.name())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    cmd
}

/// A child process running `role` against this server and queue. Its stdout is piped.
pub fn child(server: &Server, name: &str, role: &str, rt: Rt, extra: &[(&str, String)]) -> Child {
    let mut cmd = child_command(server, name, role, rt);
    cmd.stdin(Stdio::null());
    for (key, value) in extra {
        cmd.env(key, value);
    }
    cmd.spawn().expect("spawn child")
}

/// A thread collecting a child's report lines (stdout lines starting with `REPORT `).
pub struct Reader {
    rx: std::sync::mpsc::Receiver<String>,
}

impl Reader {
    pub fn new(child: &mut Child) -> Reader {
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // libtest's "test child_role_entry ... " has no newline before the
                // first report, so a report may start mid-line.
                if let Some(at) = line.find("REPORT ") {
                    if tx.send(line[at + 7..].to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Reader { rx }
    }

    /// The next line, if one comes within `limit`.
    pub fn next_within(&self, limit: Duration) -> Option<String> {
        self.rx.recv_timeout(limit).ok()
    }

    /// Lines up to and including the first that starts with `until`; fails after `limit`.
    pub fn until(&self, until: &str, limit: Duration) -> Vec<String> {
        let deadline = Instant::now() + limit;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    let stop = line.starts_with(until);
                    lines.push(line);
                    if stop {
                        return lines;
                    }
                }
                Err(_) => panic!("no {until:?} report within {limit:?}; got {lines:?}"),
            }
        }
    }
}

/// Waits for a child to exit, failing after `limit`.
pub fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            panic!("child did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A child's report line.
pub fn report(line: impl std::fmt::Display) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "REPORT {line}").ok();
    out.flush().ok();
}

/// A journal for the tests: every event in the order recorded, and a
/// `tally_queue::Record` fed the same events (which also answers the ids in flight).
#[derive(Default)]
pub struct EventLog {
    pub events: std::sync::Mutex<Vec<tally_queue::JobEvent>>,
    pub record: tally_queue::Record,
}

impl tally_queue::Journal for EventLog {
    fn record(&self, event: tally_queue::JobEvent) {
        self.events.lock().unwrap().push(event);
        tally_queue::Journal::record(&self.record, event);
    }

    fn in_flight_ids(&self) -> Option<Vec<tally_queue::JobId>> {
        self.record.in_flight_ids()
    }
}
