//! One timed run's figures, and the runs as a table.

use std::fmt::Write as _;

use crate::stats::Spent;
use crate::system::Workload;

/// One timed run.
pub(crate) struct Measurement {
    pub(crate) round: usize,
    pub(crate) system: String,
    pub(crate) workload: Workload,
    pub(crate) jobs: usize,
    pub(crate) seconds: f64,
    pub(crate) spent: Spent,
    /// Keys and bytes on the server after the run (and its check) ended.
    pub(crate) keys: u64,
    pub(crate) bytes: u64,
    /// The 1-minute load average as the run started.
    pub(crate) load: f64,
}

impl Measurement {
    pub(crate) fn rate(&self) -> f64 {
        self.jobs as f64 / self.seconds
    }

    pub(crate) fn per_job(&self, total: f64) -> f64 {
        total / self.jobs as f64
    }

    /// The progress line.
    pub(crate) fn line(&self) -> String {
        format!(
            "{:<11} {:<24} {:>9.0} jobs/s {:>8.2} µs/job sent {:>8.2} µs/job CPU {:>6.2} calls/job {:>7.1} B/job left, load {:.2}",
            self.workload.to_string(),
            self.system,
            self.rate(),
            self.per_job(self.spent.sent_usec as f64),
            self.per_job(self.spent.cpu_main_us),
            self.per_job(self.spent.sent_calls as f64),
            self.per_job(self.bytes as f64),
            self.load,
        )
    }
}

/// A run that failed: set-up, the run or its check returned an error (or took too long).
pub(crate) struct Failure {
    pub(crate) round: usize,
    pub(crate) system: String,
    pub(crate) workload: Workload,
    pub(crate) error: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<11} {:<24} FAILED: {}",
            self.workload.to_string(),
            self.system,
            self.error
        )
    }
}

/// The 1-minute load average.
pub(crate) fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The runs as tab-separated lines, one per run.
pub(crate) fn runs_tsv(measurements: &[Measurement]) -> String {
    let mut out = String::from(
        "# round\tsystem\tworkload\tjobs\tseconds\tjobs/s\tsent calls\tsent µs\tmain-thread CPU µs\tkeys left\tbytes left\tload\tcommands (name=calls/µs, * = left out as a script's)\n",
    );
    for m in measurements {
        let commands: Vec<String> = m
            .spent
            .commands
            .iter()
            .map(|(name, (calls, usec))| {
                let star = if m.spent.nested.contains(name) {
                    "*"
                } else {
                    ""
                };
                format!("{name}{star}={calls}/{usec}")
            })
            .collect();
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{:.4}\t{:.0}\t{}\t{}\t{:.0}\t{}\t{}\t{:.2}\t{}",
            m.round,
            m.system,
            m.workload,
            m.jobs,
            m.seconds,
            m.rate(),
            m.spent.sent_calls,
            m.spent.sent_usec,
            m.spent.cpu_main_us,
            m.keys,
            m.bytes,
            m.load,
            commands.join(" ")
        );
    }
    out
}
