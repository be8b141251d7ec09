//! The medians and same-round ratios of every system on every workload, for this run and
//! for the baseline (`baseline.tsv`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::measurement::{Failure, Measurement};
use crate::meta::Meta;
use crate::raw::{BATCHED, UNBATCHED};
use crate::system::Workload;

pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn spread(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// A ratio's median and its spread over the rounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ratio {
    pub(crate) median: f64,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
}

impl Ratio {
    fn of(values: Vec<f64>) -> Option<Ratio> {
        if values.is_empty() {
            return None;
        }
        let (lo, hi) = spread(&values);
        Some(Ratio {
            median: median(values),
            lo,
            hi,
        })
    }
}

/// The medians of one system on one workload, over the rounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cell {
    pub(crate) rate: f64,
    pub(crate) rate_lo: f64,
    pub(crate) rate_hi: f64,
    /// Jobs per second ÷ the raw batched loop's, in the same round.
    pub(crate) vs_batched: Option<Ratio>,
    /// Jobs per second ÷ the raw unbatched loop's, in the same round.
    pub(crate) vs_unbatched: Option<Ratio>,
    pub(crate) sent_us: f64,
    pub(crate) cpu_us: f64,
    pub(crate) sent_calls: f64,
    pub(crate) bytes: f64,
    pub(crate) keys: f64,
}

/// One command's median calls and µs per job in a cell, and whether it was left out of
/// the sum as a script's.
pub(crate) struct CommandCost {
    pub(crate) name: String,
    pub(crate) calls: f64,
    pub(crate) usec: f64,
    pub(crate) nested: bool,
}

/// Every cell of one run (or of the baseline).
pub(crate) struct Summary {
    pub(crate) systems: Vec<String>,
    pub(crate) workloads: Vec<Workload>,
    pub(crate) cells: BTreeMap<(String, Workload), Cell>,
    /// By system and workload.
    pub(crate) commands: BTreeMap<(String, Workload), Vec<CommandCost>>,
    /// By system and workload: how many runs failed.
    pub(crate) failed: BTreeMap<(String, Workload), usize>,
}

impl Summary {
    /// `systems`: the order of the report's rows.
    pub(crate) fn new(
        measurements: &[Measurement],
        failures: &[Failure],
        systems: &[String],
    ) -> Summary {
        let workloads: BTreeSet<Workload> = measurements
            .iter()
            .map(|m| m.workload)
            .chain(failures.iter().map(|f| f.workload))
            .collect();
        let mut failed = BTreeMap::new();
        for f in failures {
            *failed.entry((f.system.clone(), f.workload)).or_insert(0) += 1;
        }
        let reference = |round: usize, workload: Workload, name: &str| {
            measurements
                .iter()
                .find(|m| m.round == round && m.workload == workload && m.system == name)
                .map(Measurement::rate)
        };
        let mut cells = BTreeMap::new();
        let mut commands = BTreeMap::new();
        for system in systems {
            for &workload in &workloads {
                let runs: Vec<&Measurement> = measurements
                    .iter()
                    .filter(|m| &m.system == system && m.workload == workload)
                    .collect();
                if runs.is_empty() {
                    continue;
                }
                let of =
                    |f: &dyn Fn(&Measurement) -> f64| median(runs.iter().map(|m| f(m)).collect());
                let rates: Vec<f64> = runs.iter().map(|m| m.rate()).collect();
                let (rate_lo, rate_hi) = spread(&rates);
                let versus = |name: &str| {
                    Ratio::of(
                        runs.iter()
                            .filter_map(|m| Some(m.rate() / reference(m.round, workload, name)?))
                            .collect(),
                    )
                };
                cells.insert(
                    (system.clone(), workload),
                    Cell {
                        rate: median(rates),
                        rate_lo,
                        rate_hi,
                        vs_batched: versus(BATCHED),
                        vs_unbatched: versus(UNBATCHED),
                        sent_us: of(&|m| m.per_job(m.spent.sent_usec as f64)),
                        cpu_us: of(&|m| m.per_job(m.spent.cpu_main_us)),
                        sent_calls: of(&|m| m.per_job(m.spent.sent_calls as f64)),
                        bytes: of(&|m| m.per_job(m.bytes as f64)),
                        keys: of(&|m| m.per_job(m.keys as f64)),
                    },
                );
                let names: BTreeSet<&String> =
                    runs.iter().flat_map(|m| m.spent.commands.keys()).collect();
                let per_command = names
                    .into_iter()
                    .map(|name| {
                        let get =
                            |m: &Measurement| m.spent.commands.get(name).copied().unwrap_or((0, 0));
                        CommandCost {
                            name: name.clone(),
                            calls: of(&|m| m.per_job(get(m).0 as f64)),
                            usec: of(&|m| m.per_job(get(m).1 as f64)),
                            nested: runs.iter().any(|m| m.spent.nested.contains(name)),
                        }
                    })
                    .collect();
                commands.insert((system.clone(), workload), per_command);
            }
        }
        Summary {
            systems: systems.to_vec(),
            workloads: workloads.into_iter().collect(),
            cells,
            commands,
            failed,
        }
    }

    pub(crate) fn cell(&self, system: &str, workload: Workload) -> Option<&Cell> {
        self.cells.get(&(system.to_string(), workload))
    }

    /// The medians as `baseline.tsv`.
    pub(crate) fn baseline_tsv(&self, meta: &Meta) -> String {
        let mut out = String::from(
            "# The baseline of adapters/redis/benches/peers: the medians of one run, which later\n\
             # runs compare tally-redis's one-at-a-time path with (REDIS_BENCH_SAVE_BASELINE=1\n\
             # writes it).\n",
        );
        for line in meta.lines() {
            let _ = writeln!(out, "# {line}");
        }
        out.push_str(
            "# system\tworkload\tjobs/s\tmin\tmax\t÷ raw batched\tmin\tmax\t÷ raw unbatched\tmin\tmax\tsent µs/job\tCPU µs/job\tsent calls/job\tbytes/job left\tkeys/job left\n",
        );
        let ratio = |r: Option<Ratio>| {
            r.map_or("-\t-\t-".to_string(), |r| {
                format!("{:.4}\t{:.4}\t{:.4}", r.median, r.lo, r.hi)
            })
        };
        let rows = self.systems.iter().flat_map(|system| {
            self.workloads
                .iter()
                .filter_map(move |&workload| Some((system, workload, self.cell(system, workload)?)))
        });
        for (system, workload, c) in rows {
            let _ = writeln!(
                out,
                "{system}\t{workload}\t{:.1}\t{:.1}\t{:.1}\t{}\t{}\t{:.3}\t{:.3}\t{:.3}\t{:.1}\t{:.3}",
                c.rate,
                c.rate_lo,
                c.rate_hi,
                ratio(c.vs_batched),
                ratio(c.vs_unbatched),
                c.sent_us,
                c.cpu_us,
                c.sent_calls,
                c.bytes,
                c.keys
            );
        }
        out
    }

    /// Reads `baseline.tsv`: its comment lines (the run's description) and its cells.
    pub(crate) fn from_baseline(text: &str) -> Option<(Vec<String>, Summary)> {
        let mut about = Vec::new();
        let mut systems: Vec<String> = Vec::new();
        let mut workloads = BTreeSet::new();
        let mut cells = BTreeMap::new();
        for line in text.lines() {
            if let Some(comment) = line.strip_prefix('#') {
                let comment = comment.trim();
                if [
                    "measured:",
                    "host:",
                    "server:",
                    "clients:",
                    "BullMQ:",
                    "chasquimq:",
                    "work:",
                    "load:",
                ]
                .iter()
                .any(|key| comment.starts_with(key))
                {
                    about.push(comment.to_string());
                }
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let [system, workload, rest @ ..] = fields.as_slice() else {
                continue;
            };
            let number = |i: usize| rest.get(i)?.parse::<f64>().ok();
            let ratio = |i: usize| {
                Some(Ratio {
                    median: number(i)?,
                    lo: number(i + 1)?,
                    hi: number(i + 2)?,
                })
            };
            let workload = parse_workload(workload)?;
            if !systems.iter().any(|s| s == system) {
                systems.push(system.to_string());
            }
            workloads.insert(workload);
            cells.insert(
                (system.to_string(), workload),
                Cell {
                    rate: number(0)?,
                    rate_lo: number(1)?,
                    rate_hi: number(2)?,
                    vs_batched: ratio(3),
                    vs_unbatched: ratio(6),
                    sent_us: number(9)?,
                    cpu_us: number(10)?,
                    sent_calls: number(11)?,
                    bytes: number(12)?,
                    keys: number(13)?,
                },
            );
        }
        (!cells.is_empty()).then(|| {
            (
                about,
                Summary {
                    systems,
                    workloads: workloads.into_iter().collect(),
                    cells,
                    commands: BTreeMap::new(),
                    failed: BTreeMap::new(),
                },
            )
        })
    }
}

fn parse_workload(text: &str) -> Option<Workload> {
    match text {
        "put-one" => Some(Workload::PutOne),
        "put-bulk" => Some(Workload::PutBulk),
        _ => Some(Workload::Consume(
            text.strip_prefix("consume-")?.parse().ok()?,
        )),
    }
}
