//! BullMQ under node: a child process running `bullmq.cjs`, driven over its stdin and
//! stdout.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use crate::server::Server;
use crate::stats::script_commands;
use crate::system::{Setup, Step, System, Workload};

/// How long one request may take before the run fails (instead of hanging).
const LIMIT: Duration = Duration::from_secs(600);

pub(crate) struct BullMq {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The versions node reported: bullmq, ioredis, node.
    pub(crate) versions: String,
    nested: BTreeSet<String>,
}

impl BullMq {
    /// Starts `node bullmq.cjs MODULES SOCKET`, MODULES being a `node_modules` folder
    /// holding bullmq and ioredis.
    pub(crate) fn start(modules: &Path, server: &Server) -> Result<BullMq, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/bullmq.cjs");
        let mut child = Command::new("node")
            .arg(script)
            .arg(modules)
            .arg(server.sock())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("start node: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut bullmq = BullMq {
            stdin: child.stdin.take(),
            child,
            lines,
            versions: String::new(),
            nested: script_commands(&modules.join("bullmq/dist/cjs/commands")),
        };
        let hello = bullmq.answer()?;
        bullmq.versions = hello
            .strip_prefix("hello ")
            .ok_or_else(|| format!("node said {hello:?}"))?
            .to_string();
        Ok(bullmq)
    }

    fn answer(&mut self) -> Result<String, String> {
        match self.lines.recv_timeout(LIMIT) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(format!("node gave no answer within {LIMIT:?}")),
            Err(RecvTimeoutError::Disconnected) => Err("node exited".to_string()),
        }
    }

    fn request(&mut self, request: &str, expect: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("node's stdin is closed")?;
        writeln!(stdin, "{request}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("to node: {e}"))?;
        let line = self.answer()?;
        if line == expect {
            Ok(())
        } else {
            Err(format!("BullMQ, {request}: {line}"))
        }
    }
}

impl Drop for BullMq {
    fn drop(&mut self) {
        // End of input: the script exits.
        drop(self.stdin.take());
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl System for BullMq {
    fn name(&self) -> &str {
        "BullMQ (node)"
    }

    fn method(&self, batch: usize) -> String {
        format!(
            "`Queue.add`; bulk: `Queue.addBulk` of {batch} jobs; a consumer is a `Worker` of \
             concurrency 1 whose processor returns at once; jobs are removed once completed \
             (`removeOnComplete`), as the others delete an acknowledged entry"
        )
    }

    fn nested(&self) -> &BTreeSet<String> {
        &self.nested
    }

    fn prepare<'a>(
        &'a mut self,
        _server: &'a Server,
        workload: Workload,
        setup: Setup,
    ) -> Step<'a> {
        let (kind, consumers) = match workload {
            Workload::PutOne => ("put-one", 0),
            Workload::PutBulk => ("put-bulk", 0),
            Workload::Consume(n) => ("consume", n),
        };
        let request = format!("prepare {kind} {} {consumers} {}", setup.jobs, setup.batch);
        Box::pin(async move { self.request(&request, "ready") })
    }

    fn run(&mut self) -> Step<'_> {
        Box::pin(async move { self.request("go", "done") })
    }

    fn finish(&mut self) -> Step<'_> {
        Box::pin(async move { self.request("finish", "ok") })
    }
}
