//! Jobs per second through put, get and succeed on one local `redis-server` (Unix socket,
//! AOF off), against raw `XADD` / `XREADGROUP` / `XACK` + `XDEL` over the same client in
//! the same run; then 1, 4 and 16 consumers. Run: `cargo bench -p tally-redis`.
//!
//! Each figure is the best of three runs (wall clock: this is a throughput benchmark of a
//! network server, not an instruction count).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::Value;
use tally_redis::{Bytes, Options, Queue};

const JOBS: u64 = 4000;

struct Server {
    dir: PathBuf,
    child: Child,
}

impl Server {
    fn start() -> Option<Server> {
        let dir = std::env::temp_dir().join(format!("tally-redis-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).ok()?;
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(dir.join("redis.sock"))
            .arg("--dir")
            .arg(&dir)
            .args(["--appendonly", "no", "--save", ""])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let server = Server { dir, child };
        let start = Instant::now();
        while server.client().get_connection().is_err() {
            assert!(start.elapsed() < Duration::from_secs(5), "no PING");
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(server)
    }

    fn client(&self) -> redis::Client {
        redis::Client::open(format!(
            "redis+unix://{}",
            self.dir.join("redis.sock").display()
        ))
        .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn best_of_three<F: FnMut() -> Duration>(mut run: F) -> f64 {
    let best = (0..3).map(|_| run()).min().unwrap();
    JOBS as f64 / best.as_secs_f64()
}

/// The queue: `JOBS` puts, then `consumers` handles take and succeed them concurrently.
async fn queue_run(server: &Server, name: &str, consumers: usize) -> Duration {
    let options = Options::new().poll(Duration::from_millis(20));
    let producer = Queue::open(server.client(), name, Bytes, options)
        .await
        .unwrap();
    let mut handles = Vec::new();
    for _ in 0..consumers {
        handles.push(
            Queue::open(server.client(), name, Bytes, options)
                .await
                .unwrap(),
        );
    }
    let start = Instant::now();
    for n in 0..JOBS {
        producer.put(n.to_le_bytes().to_vec()).await.unwrap();
    }
    let mut tasks = Vec::new();
    for handle in handles {
        tasks.push(tokio::spawn(async move {
            while let Ok(job) = handle.try_get().await {
                job.succeed().await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = start.elapsed();
    assert_eq!(producer.ledger().await.unwrap().succeeded, JOBS);
    elapsed
}

/// The baseline: the same work with raw commands on one multiplexed connection per
/// consumer (`XADD`; `XREADGROUP COUNT 1`; `XACK` + `XDEL`), no ledger, no fence.
async fn raw_run(server: &Server, key: &str, consumers: usize) -> Duration {
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: Value = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(key)
        .arg("g")
        .arg("0")
        .arg("MKSTREAM")
        .query_async(&mut con)
        .await
        .unwrap();
    let mut cons = Vec::new();
    for _ in 0..consumers {
        cons.push(
            server
                .client()
                .get_multiplexed_async_connection()
                .await
                .unwrap(),
        );
    }
    let start = Instant::now();
    for n in 0..JOBS {
        let _: Value = redis::cmd("XADD")
            .arg(key)
            .arg("*")
            .arg("j")
            .arg(n)
            .arg("p")
            .arg(n.to_le_bytes().as_slice())
            .query_async(&mut con)
            .await
            .unwrap();
    }
    let mut tasks = Vec::new();
    for (i, con) in cons.into_iter().enumerate() {
        let key = key.to_string();
        tasks.push(tokio::spawn(async move { raw_consume(con, &key, i).await }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    start.elapsed()
}

async fn raw_consume(mut con: MultiplexedConnection, key: &str, i: usize) {
    loop {
        let reply: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg("g")
            .arg(format!("c{i}"))
            .arg("COUNT")
            .arg(1)
            .arg("STREAMS")
            .arg(key)
            .arg(">")
            .query_async(&mut con)
            .await
            .unwrap();
        let Some(id) = first_id(reply) else { return };
        let _: Value = redis::cmd("XACK")
            .arg(key)
            .arg("g")
            .arg(&id)
            .query_async(&mut con)
            .await
            .unwrap();
        let _: Value = redis::cmd("XDEL")
            .arg(key)
            .arg(&id)
            .query_async(&mut con)
            .await
            .unwrap();
    }
}

fn first_id(reply: Value) -> Option<String> {
    let Value::Array(streams) = reply else {
        return None;
    };
    let Value::Array(mut stream) = streams.into_iter().next()? else {
        return None;
    };
    let Value::Array(entries) = stream.pop()? else {
        return None;
    };
    let Value::Array(mut entry) = entries.into_iter().next()? else {
        return None;
    };
    entry.truncate(1);
    match entry.pop()? {
        Value::BulkString(id) => String::from_utf8(id).ok(),
        _ => None,
    }
}

fn main() {
    let Some(server) = Server::start() else {
        eprintln!("*** SKIPPED: redis-server is not installed ***");
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("{JOBS} jobs, put then get + succeed; best of 3; jobs/s");
    println!("consumers | tally-redis | raw XADD/XREADGROUP/XACK+XDEL | overhead");
    let mut round = 0;
    for consumers in [1, 4, 16] {
        let queue = best_of_three(|| {
            round += 1;
            rt.block_on(queue_run(&server, &format!("q{round}"), consumers))
        });
        let raw = best_of_three(|| {
            round += 1;
            rt.block_on(raw_run(&server, &format!("raw{round}"), consumers))
        });
        println!(
            "{consumers:>9} | {queue:>13.0} | {raw:>29.0} | {:.2}x",
            raw / queue
        );
    }
}
