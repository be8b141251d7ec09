//! A system under test, and the workloads every system runs.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::server::Server;

/// One step of a run: set-up, the timed part, or the check and tear-down.
pub(crate) type Step<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + 'a>>;

/// What a run does with its `jobs` jobs, on an empty server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Workload {
    /// Puts, each waiting for its reply before the next.
    PutOne,
    /// Puts as fast as the system's bulk path goes (a batch, or puts in flight).
    PutBulk,
    /// The jobs are put first (untimed); then this many consumers take each job and
    /// acknowledge it (the handler does nothing else) until none is left.
    Consume(usize),
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Workload::PutOne => f.write_str("put-one"),
            Workload::PutBulk => f.write_str("put-bulk"),
            Workload::Consume(n) => write!(f, "consume-{n}"),
        }
    }
}

/// What every run shares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Setup {
    pub(crate) jobs: usize,
    /// The batch of the batched paths, and the puts in flight of a bulk put without one.
    pub(crate) batch: usize,
}

/// A job's payload: 64 bytes.
pub(crate) const PAYLOAD: [u8; 64] = [b'x'; 64];

/// A queue on the server, driven through one run at a time: `prepare` (untimed: connect,
/// create the queue, put the jobs a consume starts from), `run` (timed), `finish` (untimed:
/// check that every job was put or consumed, then disconnect).
pub(crate) trait System {
    /// The name in the report.
    fn name(&self) -> &str;
    /// How it puts one at a time, puts in bulk and consumes, for the report.
    fn method(&self, batch: usize) -> String;
    /// The commands this system's scripts run (see [`crate::stats::Spent`]).
    fn nested(&self) -> &BTreeSet<String>;
    fn prepare<'a>(&'a mut self, server: &'a Server, workload: Workload, setup: Setup) -> Step<'a>;
    fn run(&mut self) -> Step<'_>;
    fn finish(&mut self) -> Step<'_>;
}
