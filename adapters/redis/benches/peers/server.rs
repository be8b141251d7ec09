//! The one `redis-server` every system is measured on, started here on a Unix socket in a
//! temp dir, and what the harness reads from it between runs.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::AsyncConnectionConfig;

/// A `redis-server` child: AOF on with the given fsync policy, no RDB snapshots, automatic
/// AOF rewrites off (the harness rewrites the AOF between runs, so no rewrite forks during
/// one). Killed, and its dir removed, on drop.
pub(crate) struct Server {
    dir: PathBuf,
    sock: PathBuf,
    child: Child,
    /// The `appendfsync` policy it runs with.
    pub(crate) fsync: String,
    /// `redis-server --version`.
    pub(crate) version: String,
}

/// Whether `redis-server` can be run at all.
pub(crate) fn installed() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

impl Server {
    pub(crate) fn start(fsync: &str) -> Result<Server, String> {
        let version = Command::new("redis-server")
            .arg("--version")
            .output()
            .map_err(|e| format!("redis-server --version: {e}"))?;
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        let dir = std::env::temp_dir().join(format!("tally-redis-peers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let sock = dir.join("redis.sock");
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&sock)
            .args(["--unixsocketperm", "700", "--dir"])
            .arg(&dir)
            .args(["--appendonly", "yes", "--appendfsync", fsync])
            .args(["--save", "", "--auto-aof-rewrite-percentage", "0"])
            .args(["--daemonize", "no", "--logfile", "redis.log"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start redis-server: {e}"))?;
        let server = Server {
            dir,
            sock,
            child,
            fsync: fsync.to_string(),
            version,
        };
        let start = Instant::now();
        let client = server.client();
        loop {
            let pong = client
                .get_connection_with_timeout(Duration::from_millis(200))
                .and_then(|mut con| redis::cmd("PING").query::<String>(&mut con));
            if pong.is_ok() {
                return Ok(server);
            }
            if start.elapsed() > Duration::from_secs(5) {
                return Err(format!(
                    "redis-server did not answer PING within 5 s: {pong:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The socket's path.
    pub(crate) fn sock(&self) -> &std::path::Path {
        &self.sock
    }

    pub(crate) fn client(&self) -> redis::Client {
        redis::Client::open(format!("redis+unix://{}", self.sock.display()))
            .expect("a Unix socket URL")
    }

    /// A multiplexed connection that waits a minute for a reply (the client's default of
    /// 500 ms is short for a pipeline on a loaded two-core machine).
    pub(crate) async fn connect(&self) -> Result<MultiplexedConnection, String> {
        let config =
            AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(60)));
        self.client()
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| format!("connect: {e}"))
    }

    /// Empties the server for the next run: `FLUSHALL`, then an AOF rewrite (of the empty
    /// data set, so it is quick), waited for.
    pub(crate) async fn reset(&self, con: &mut MultiplexedConnection) -> Result<(), String> {
        let () = redis::cmd("FLUSHALL")
            .query_async(con)
            .await
            .map_err(|e| format!("FLUSHALL: {e}"))?;
        let _: redis::Value = redis::cmd("BGREWRITEAOF")
            .query_async(con)
            .await
            .map_err(|e| format!("BGREWRITEAOF: {e}"))?;
        let start = Instant::now();
        loop {
            let info = info(con, "persistence").await?;
            let busy = ["aof_rewrite_in_progress", "aof_rewrite_scheduled"]
                .iter()
                .any(|field| field_value(&info, field) != Some("0"));
            if !busy {
                return Ok(());
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err("the AOF rewrite did not finish within 60 s".to_string());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `INFO section`.
pub(crate) async fn info(con: &mut MultiplexedConnection, section: &str) -> Result<String, String> {
    redis::cmd("INFO")
        .arg(section)
        .query_async(con)
        .await
        .map_err(|e| format!("INFO {section}: {e}"))
}

/// The value of `field:value` in an `INFO` reply.
pub(crate) fn field_value<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name == field).then_some(value.trim())
    })
}

/// Whether `redis-server --version` (`Redis server v=8.6.3 ...`) is at least
/// `major.minor`.
pub(crate) fn at_least(version: &str, major: u32, minor: u32) -> bool {
    let Some(v) = version.split("v=").nth(1) else {
        return false;
    };
    let mut parts = v
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>());
    match (parts.next(), parts.next()) {
        (Some(Ok(a)), Some(Ok(b))) => (a, b) >= (major, minor),
        _ => false,
    }
}
