//! chasquimq's side of the Redis peers benchmark (adapters/redis/benches/peers/chasquimq.rs
//! drives it), speaking the same protocol as `bullmq.cjs`:
//!
//!   chasquimq-peer SOCKET EVENTS          (EVENTS: `on` = the defaults, or `off`)
//!
//! One request per line on stdin, one answer per line on stdout:
//!
//!   prepare WORKLOAD JOBS CONSUMERS BATCH  ->  ready        (untimed set-up)
//!   go                                     ->  done         (the timed part)
//!   finish                                 ->  ok           (checks, then disconnects)
//!
//! Any failure answers `error MESSAGE`. Producers and consumers run with chasquimq's
//! default settings, but for the queue's name and, with `off`, `events_enabled: false`.
//!
//! A consume starts its consumers before the timed part, on a group placed after the jobs
//! (so that they find nothing and block); the timed part moves the group back to the
//! start and puts the last job, which wakes the blocked readers. It ends once every
//! handler has run and the stream is empty (chasquimq acknowledges with `XACKDEL`, which
//! deletes the entry, in batches after the handler returns).

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chasquimq::{Bytes, Consumer, ConsumerConfig, Producer, ProducerConfig};
use fred::clients::Client;
use fred::interfaces::ClientLike;
use fred::prelude::Config;
use fred::types::{ClusterHash, CustomCommand, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const QUEUE: &str = "bench";
/// chasquimq's default consumer group.
const GROUP: &str = "default";
/// How long the set-up, or the wait for the stream to empty, may take.
const LIMIT: Duration = Duration::from_secs(120);

type Payload = String;

fn payload() -> Payload {
    // 64 bytes, as the other systems' payloads.
    "x".repeat(64)
}

struct Run {
    workload: String,
    jobs: usize,
    batch: usize,
    producer: Producer<Payload>,
    consumers: Vec<Consumer<Payload>>,
    running: Vec<JoinHandle<chasquimq::Result<()>>>,
    handled: Arc<AtomicUsize>,
    stop: CancellationToken,
}

struct Peer {
    url: String,
    events: bool,
    admin: Client,
    stream: String,
    run: Option<Run>,
}

async fn command(client: &Client, name: &'static str, args: Vec<Value>) -> Result<Value, String> {
    client
        .custom::<Value, _>(
            CustomCommand::new_static(name, ClusterHash::FirstKey, false),
            args,
        )
        .await
        .map_err(|e| format!("{name}: {e}"))
}

fn integer(value: &Value) -> Result<usize, String> {
    match value {
        Value::Integer(n) if *n >= 0 => Ok(*n as usize),
        other => Err(format!("expected a count, got {other:?}")),
    }
}

impl Peer {
    async fn xlen(&self) -> Result<usize, String> {
        integer(&command(&self.admin, "XLEN", vec![self.stream.as_str().into()]).await?)
    }

    async fn add_bulk(
        producer: &Producer<Payload>,
        jobs: usize,
        batch: usize,
    ) -> Result<(), String> {
        let mut left = jobs;
        while left > 0 {
            let n = left.min(batch);
            producer
                .add_bulk(vec![payload(); n])
                .await
                .map_err(|e| format!("add_bulk: {e}"))?;
            left -= n;
        }
        Ok(())
    }

    async fn close_leftovers(&mut self) {
        if let Some(run) = self.run.take() {
            run.stop.cancel();
            for handle in run.running {
                let _ = tokio::time::timeout(LIMIT, handle).await;
            }
            let _ = run.producer.shutdown().await;
        }
    }

    async fn prepare(
        &mut self,
        workload: &str,
        jobs: usize,
        consumers: usize,
        batch: usize,
    ) -> Result<(), String> {
        self.close_leftovers().await;
        let producer = Producer::<Payload>::connect(
            &self.url,
            ProducerConfig {
                queue_name: QUEUE.to_string(),
                ..ProducerConfig::default()
            },
        )
        .await
        .map_err(|e| format!("producer: {e}"))?;
        let mut run = Run {
            workload: workload.to_string(),
            jobs,
            batch,
            producer,
            consumers: Vec::new(),
            running: Vec::new(),
            handled: Arc::new(AtomicUsize::new(0)),
            stop: CancellationToken::new(),
        };
        if workload == "consume" {
            // All jobs but the last, then the group after them: the consumers start, find
            // nothing and block until `go`.
            Self::add_bulk(&run.producer, jobs - 1, batch).await?;
            command(
                &self.admin,
                "XGROUP",
                vec![
                    "CREATE".into(),
                    self.stream.as_str().into(),
                    GROUP.into(),
                    "$".into(),
                    "MKSTREAM".into(),
                ],
            )
            .await?;
            for _ in 0..consumers {
                let config = ConsumerConfig {
                    queue_name: QUEUE.to_string(),
                    events_enabled: self.events,
                    ..ConsumerConfig::default()
                };
                run.consumers.push(Consumer::new(self.url.clone(), config));
            }
            for consumer in std::mem::take(&mut run.consumers) {
                let handled = run.handled.clone();
                let stop = run.stop.clone();
                run.running.push(tokio::spawn(consumer.run(
                    move |_job| {
                        // Relaxed: a count read once every handler has run.
                        handled.fetch_add(1, Ordering::Relaxed);
                        async { Ok(Bytes::new()) }
                    },
                    stop,
                )));
            }
            // Ready once every consumer has read (and blocked) on the group.
            let start = Instant::now();
            loop {
                let reply = command(
                    &self.admin,
                    "XINFO",
                    vec![
                        "CONSUMERS".into(),
                        self.stream.as_str().into(),
                        GROUP.into(),
                    ],
                )
                .await?;
                let seen = match &reply {
                    Value::Array(list) => list.len(),
                    other => return Err(format!("XINFO CONSUMERS: {other:?}")),
                };
                if seen == consumers {
                    break;
                }
                if let Some(failed) = run.running.iter().position(|h| h.is_finished()) {
                    return Err(format!("consumer {failed} stopped during set-up"));
                }
                if start.elapsed() > LIMIT {
                    return Err(format!(
                        "{seen} of {consumers} consumers ready after {LIMIT:?}"
                    ));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        self.run = Some(run);
        Ok(())
    }

    async fn go(&mut self) -> Result<(), String> {
        let run = self.run.as_ref().ok_or("go before prepare")?;
        match run.workload.as_str() {
            "put-one" => {
                for _ in 0..run.jobs {
                    run.producer
                        .add(payload())
                        .await
                        .map_err(|e| format!("add: {e}"))?;
                }
            }
            "put-bulk" => Self::add_bulk(&run.producer, run.jobs, run.batch).await?,
            "consume" => {
                command(
                    &self.admin,
                    "XGROUP",
                    vec![
                        "SETID".into(),
                        self.stream.as_str().into(),
                        GROUP.into(),
                        "0".into(),
                    ],
                )
                .await?;
                run.producer
                    .add(payload())
                    .await
                    .map_err(|e| format!("add: {e}"))?;
                let start = Instant::now();
                while run.handled.load(Ordering::Relaxed) < run.jobs || self.xlen().await? > 0 {
                    if start.elapsed() > LIMIT {
                        return Err(format!(
                            "after {LIMIT:?}: {} of {} handled, {} left in the stream",
                            run.handled.load(Ordering::Relaxed),
                            run.jobs,
                            self.xlen().await?
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            other => return Err(format!("unknown workload {other}")),
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<(), String> {
        let run = self.run.take().ok_or("finish before prepare")?;
        run.stop.cancel();
        let mut errors = Vec::new();
        for handle in run.running {
            match tokio::time::timeout(LIMIT, handle).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => errors.push(format!("consumer: {e}")),
                Ok(Err(e)) => errors.push(format!("consumer task: {e}")),
                Err(_) => errors.push(format!("a consumer did not stop within {LIMIT:?}")),
            }
        }
        run.producer
            .shutdown()
            .await
            .map_err(|e| format!("producer shutdown: {e}"))?;
        let left = self.xlen().await?;
        let handled = run.handled.load(Ordering::Relaxed);
        let (want_left, want_handled) = if run.workload == "consume" {
            (0, run.jobs)
        } else {
            (run.jobs, 0)
        };
        if left != want_left || handled != want_handled {
            errors.push(format!(
                "{} jobs: {left} in the stream, {handled} handled",
                run.jobs
            ));
        }
        if run.workload == "consume" {
            let pending = command(
                &self.admin,
                "XPENDING",
                vec![self.stream.as_str().into(), GROUP.into()],
            )
            .await?;
            match &pending {
                Value::Array(fields) if fields.first().and_then(|n| integer(n).ok()) == Some(0) => {
                }
                other => errors.push(format!("pending after the run: {other:?}")),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    async fn handle(&mut self, line: &str) -> Result<&'static str, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |i: usize| -> Result<usize, String> {
            words
                .get(i)
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| format!("bad request {line:?}"))
        };
        match words.first().copied() {
            Some("prepare") => {
                let workload = words.get(1).ok_or("prepare: no workload")?.to_string();
                self.prepare(&workload, number(2)?, number(3)?, number(4)?)
                    .await?;
                Ok("ready")
            }
            Some("go") => self.go().await.map(|()| "done"),
            Some("finish") => self.finish().await.map(|()| "ok"),
            _ => Err(format!("unknown request {line:?}")),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (socket, events) = match args.as_slice() {
        [_, socket, events] if events == "on" || events == "off" => {
            (socket.clone(), events == "on")
        }
        _ => {
            eprintln!("usage: chasquimq-peer SOCKET on|off");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let url = format!("redis+unix://{socket}");
    let admin = rt.block_on(async {
        let client = Client::new(
            Config::from_url(&url).expect("a Unix socket URL"),
            None,
            None,
            None,
        );
        client.init().await.map(|_| client)
    });
    let mut out = std::io::stdout().lock();
    let admin = match admin {
        Ok(admin) => admin,
        Err(e) => {
            let _ = writeln!(out, "error connect {url}: {e}");
            std::process::exit(1);
        }
    };
    let mut peer = Peer {
        url,
        events,
        admin,
        stream: format!("{{chasqui:{QUEUE}}}:stream"),
        run: None,
    };
    // The version is pinned in Cargo.toml.
    let _ = writeln!(out, "hello chasquimq 1.3.0 (Rust, fred client)");
    let _ = out.flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let answer = match rt.block_on(peer.handle(&line)) {
            Ok(answer) => answer.to_string(),
            Err(e) => format!("error {}", e.replace('\n', " | ")),
        };
        let _ = writeln!(out, "{answer}");
        let _ = out.flush();
    }
    rt.block_on(peer.close_leftovers());
}
