//! A system under test that runs in a child process (BullMQ under node, chasquimq's
//! binary), driven over its stdin and stdout: one request per line, one answer per line
//! (`prepare WORKLOAD JOBS CONSUMERS BATCH` -> `ready`, `go` -> `done`, `finish` -> `ok`,
//! or `error MESSAGE`), after a first line `hello VERSIONS`.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use crate::server::Server;
use crate::system::{Setup, Step, System, Workload};

/// How long one request may take before the run fails (instead of hanging).
const LIMIT: Duration = Duration::from_secs(600);

pub(crate) struct Process {
    name: String,
    method: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The versions it reported.
    pub(crate) versions: String,
    nested: BTreeSet<String>,
}

impl Process {
    /// Starts `command` and reads its `hello`. `method` is the report's description, with
    /// `{batch}` replaced by the batch; `nested`, the commands its scripts run.
    pub(crate) fn start(
        name: &str,
        method: &str,
        mut command: Command,
        nested: BTreeSet<String>,
    ) -> Result<Process, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("start {:?}: {e}", command.get_program()))?;
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
        let mut process = Process {
            name: name.to_string(),
            method: method.to_string(),
            stdin: child.stdin.take(),
            child,
            lines,
            versions: String::new(),
            nested,
        };
        let hello = process.answer()?;
        process.versions = hello
            .strip_prefix("hello ")
            .ok_or_else(|| format!("{name} said {hello:?}"))?
            .to_string();
        Ok(process)
    }

    fn answer(&mut self) -> Result<String, String> {
        match self.lines.recv_timeout(LIMIT) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("{} gave no answer within {LIMIT:?}", self.name))
            }
            Err(RecvTimeoutError::Disconnected) => Err(format!("{} exited", self.name)),
        }
    }

    fn request(&mut self, request: &str, expect: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the child's stdin is closed")?;
        writeln!(stdin, "{request}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("to {}: {e}", self.name))?;
        let line = self.answer()?;
        if line == expect {
            Ok(())
        } else {
            Err(format!("{}, {request}: {line}", self.name))
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // End of input: the child exits.
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

impl System for Process {
    fn name(&self) -> &str {
        &self.name
    }

    fn method(&self, batch: usize) -> String {
        self.method.replace("{batch}", &batch.to_string())
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
