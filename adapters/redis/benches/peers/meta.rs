//! What the report says about a run besides its figures: when, on what, with what.

use std::process::Command;

use crate::server::Server;
use crate::system::Setup;

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| format!("{program}: not found"))
}

/// What the report says about the run besides its figures.
pub(crate) struct Meta {
    pub(crate) date: String,
    pub(crate) commit: String,
    pub(crate) host: String,
    pub(crate) server: String,
    pub(crate) clients: String,
    /// BullMQ's versions, or why it was not measured.
    pub(crate) bullmq: Result<String, String>,
    /// chasquimq's version, or why it was not measured.
    pub(crate) chasquimq: Result<String, String>,
    pub(crate) setup: Setup,
    pub(crate) rounds: usize,
    pub(crate) consumers: Vec<usize>,
    pub(crate) load_before: f64,
    pub(crate) load_rounds: Vec<f64>,
    pub(crate) load_after: f64,
    /// Each system's name and how it puts and consumes.
    pub(crate) methods: Vec<(String, String)>,
}

impl Meta {
    pub(crate) fn collect(
        server: &Server,
        setup: Setup,
        rounds: usize,
        consumers: &[usize],
    ) -> Meta {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
            .map_or("unknown CPU", |(_, model)| model.trim());
        let memory = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| {
                let kib: f64 = text
                    .lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()?;
                Some(format!("{:.0} GiB", kib / 1_048_576.0))
            })
            .unwrap_or_else(|| "unknown memory".to_string());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or_else(|_| "unknown kernel".to_string(), |k| k.trim().to_string());
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        let lock = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"),
        )
        .unwrap_or_default();
        let redis_crate = lock
            .split("[[package]]")
            .find(|package| package.contains("\nname = \"redis\"\n"))
            .and_then(|package| package.split("version = \"").nth(1)?.split('"').next())
            .unwrap_or("unknown");
        Meta {
            date: command_output("date", &["-u", "+%Y-%m-%dT%H:%MZ"]),
            commit: std::env::var("REDIS_BENCH_COMMIT")
                .unwrap_or_else(|_| "not recorded (REDIS_BENCH_COMMIT unset)".to_string()),
            host: format!("{cores} cores, {cpu}, {memory}, Linux {kernel}"),
            server: format!(
                "{}; Unix socket; appendonly yes, appendfsync {}, save \"\", automatic AOF \
                 rewrites off (rewritten between runs); emptied before every run",
                server.version, server.fsync
            ),
            clients: format!(
                "{}; redis crate {redis_crate} on tokio (2 worker threads)",
                command_output("rustc", &["--version"])
            ),
            bullmq: Err("not started".to_string()),
            chasquimq: Err("not started".to_string()),
            setup,
            rounds,
            consumers: consumers.to_vec(),
            load_before: f64::NAN,
            load_rounds: Vec::new(),
            load_after: f64::NAN,
            methods: Vec::new(),
        }
    }

    pub(crate) fn lines(&self) -> Vec<String> {
        let rounds: Vec<String> = self.load_rounds.iter().map(|l| format!("{l:.2}")).collect();
        vec![
            format!("measured: {}, {}", self.date, self.commit),
            format!("host:     {}", self.host),
            format!("server:   {}", self.server),
            format!("clients:  {}", self.clients),
            format!(
                "BullMQ:   {}",
                match &self.bullmq {
                    Ok(versions) => versions.clone(),
                    Err(why) => format!("not measured: {why}"),
                }
            ),
            format!(
                "chasquimq: {}",
                match &self.chasquimq {
                    Ok(versions) => versions.clone(),
                    Err(why) => format!("not measured: {why}"),
                }
            ),
            format!(
                "work:     {} jobs of 64 bytes per run, batch {}, consumers {:?}; {} rounds, the \
                 systems' order rotated every round and workload; medians",
                self.setup.jobs, self.setup.batch, self.consumers, self.rounds
            ),
            format!(
                "load:     1-min load average {:.2} before, {} at each round's start, {:.2} after \
                 (a load above the core count means other work shared the cores)",
                self.load_before,
                rounds.join(", "),
                self.load_after
            ),
        ]
    }
}
