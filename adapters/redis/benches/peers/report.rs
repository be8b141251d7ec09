//! The Markdown of the Redis section.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::measurement::Failure;
use crate::meta::Meta;
use crate::summary::{median, Cell, Summary};
use crate::system::Workload;
use crate::verdicts::verdicts;

pub(crate) fn heading(workload: Workload) -> String {
    match workload {
        Workload::PutOne => "put one at a time".to_string(),
        Workload::PutBulk => "bulk put".to_string(),
        Workload::Consume(1) => "consume, 1 consumer".to_string(),
        Workload::Consume(n) => format!("consume, {n} consumers"),
    }
}

pub(crate) fn rate(jobs_per_second: f64) -> String {
    match jobs_per_second {
        r if r >= 100_000.0 => format!("{:.0}k", r / 1000.0),
        r if r >= 10_000.0 => format!("{:.1}k", r / 1000.0),
        r if r >= 1000.0 => format!("{:.2}k", r / 1000.0),
        r => format!("{r:.0}"),
    }
}

pub(crate) fn micros(us: f64) -> String {
    match us {
        u if u >= 100.0 => format!("{u:.0}"),
        u if u >= 10.0 => format!("{u:.1}"),
        u => format!("{u:.2}"),
    }
}

pub(crate) fn times(ratio: f64) -> String {
    format!("{ratio:.2}×")
}

/// A system's name in a table: a batched one says its batch.
fn row_name(system: &str, batch: usize) -> String {
    if system.ends_with(", batched") {
        format!("{system} by {batch}")
    } else {
        system.to_string()
    }
}

fn table_head(out: &mut String, workloads: &[Workload], extra: &[&str]) {
    out.push_str("| system |");
    for &w in workloads {
        let _ = write!(out, " {} |", heading(w));
    }
    for e in extra {
        let _ = write!(out, " {e} |");
    }
    out.push_str("\n|---|");
    for _ in 0..workloads.len() + extra.len() {
        out.push_str("---:|");
    }
    out.push('\n');
}

/// Jobs per second: median (min–max over the rounds) and the median ratio to the raw
/// batched loop in the same round.
fn rate_table(out: &mut String, summary: &Summary, batch: usize) {
    table_head(out, &summary.workloads, &[]);
    for system in &summary.systems {
        let _ = write!(out, "| {} |", row_name(system, batch));
        for &w in &summary.workloads {
            let failed = summary
                .failed
                .get(&(system.clone(), w))
                .map_or(String::new(), |n| format!(" · {n} failed"));
            match summary.cell(system, w) {
                Some(c) => {
                    let _ = write!(
                        out,
                        " {} ({}–{}){}{failed} |",
                        rate(c.rate),
                        rate(c.rate_lo),
                        rate(c.rate_hi),
                        c.vs_batched
                            .map_or(String::new(), |r| format!(" · **{}**", times(r.median)))
                    );
                }
                None if !failed.is_empty() => {
                    let _ = write!(out, " **failed**{failed} |");
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out.push('\n');
}

/// Server time per job: commands sent / main-thread CPU (commands sent per job).
fn server_table(out: &mut String, summary: &Summary, batch: usize) {
    table_head(out, &summary.workloads, &[]);
    for system in &summary.systems {
        let _ = write!(out, "| {} |", row_name(system, batch));
        for &w in &summary.workloads {
            match summary.cell(system, w) {
                Some(c) => {
                    let _ = write!(
                        out,
                        " {} / {} ({:.2}) |",
                        micros(c.sent_us),
                        micros(c.cpu_us),
                        c.sent_calls
                    );
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out.push('\n');
}

/// Bytes and keys per job left once every job is consumed: medians over the consume runs.
fn left_table(out: &mut String, summary: &Summary, batch: usize) {
    out.push_str("| system | bytes per job left | keys per job left |\n|---|---:|---:|\n");
    for system in &summary.systems {
        let consumed: Vec<&Cell> = summary
            .workloads
            .iter()
            .filter(|w| matches!(w, Workload::Consume(_)))
            .filter_map(|&w| summary.cell(system, w))
            .collect();
        if consumed.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.3} |",
            row_name(system, batch),
            median(consumed.iter().map(|c| c.bytes).collect()),
            median(consumed.iter().map(|c| c.keys).collect())
        );
    }
    out.push('\n');
}

/// The Redis section of `BENCHMARKS.md`.
pub(crate) fn render(
    meta: &Meta,
    summary: &Summary,
    failures: &[Failure],
    baseline: Option<&str>,
    is_baseline: bool,
) -> String {
    let batch = meta.setup.batch;
    let baseline = baseline.and_then(Summary::from_baseline);
    let mut out = String::new();
    let title = std::env::var("REDIS_BENCH_HEADING").unwrap_or_else(|_| "## Redis".to_string());
    let _ = writeln!(out, "{title}\n");
    out.push_str(
        "Written by `bash adapters/redis/benches/report.sh` (with `REDIS8=1` for the section on \
         Redis 8.6) from one run of its own (the harness is `adapters/redis/benches/peers/`; \
         `benches/report.sh` runs it for the section on the system's Redis, unless `SKIP_REDIS` \
         is set or no `redis-server` is installed, and keeps the Redis 8.6 section as it is). \
         Every system below ran in that run, on one `redis-server` the harness started, with \
         the same settings for all:\n\n",
    );
    let _ = writeln!(out, "```text\n{}\n```\n", meta.lines().join("\n"));

    out.push_str("### Jobs per second\n\n");
    let _ = writeln!(
        out,
        "Median (lowest–highest over the rounds) · **the median of each round's ratio to the \
         raw loop batched by {batch}**.\n"
    );
    rate_table(&mut out, summary, batch);
    out.push_str(
        "*Put one at a time*: each put waits for its reply. *Bulk put*: as fast as the \
         system's bulk path goes. *Consume*: the jobs are put first (untimed); then the \
         consumers, each with its own connections, take every job and acknowledge it (the \
         handler does nothing else), and the clock stops when none is left. The two raw loops \
         put one at a time with the same code, so their ratio in that column shows how far \
         apart two runs of one thing land in this run. Each system:\n\n",
    );
    for (system, method) in &meta.methods {
        let _ = writeln!(out, "- {}: {method}", row_name(system, batch));
    }
    out.push('\n');

    out.push_str("### Server time per job\n\n");
    out.push_str(
        "µs per job of commands sent (`INFO commandstats`) / µs per job of the server's main \
         thread CPU, user + system (`INFO cpu`), both as deltas over the timed run (commands \
         sent per job). For a consume, that is the server's time per consumed job.\n\n",
    );
    server_table(&mut out, summary, batch);
    out.push_str(
        "`INFO commandstats` counts each command a script runs as a call of its own, and the \
         script's time already includes it, so summing every command counts a script's inner \
         commands twice. The sum here is of what clients sent: scripts (`EVAL*`, `FCALL*`) \
         whole, and every other command whose name none of the system's scripts run (found in \
         its Lua sources; `EXEC` is left out, its commands are counted one by one). A \
         command's time there is wall-clock time inside it, so on a loaded host it also \
         counts the moments the server's thread was preempted. The CPU figure has neither \
         issue, and includes reading and writing the sockets. The commands behind each figure \
         are listed at the end.\n\n",
    );

    out.push_str("### Left on the server\n\n");
    out.push_str(
        "Once every job is consumed and the system has disconnected: the keys left and the sum \
         of their `MEMORY USAGE … SAMPLES 0`, per job, medians over the consume runs (the \
         server is empty before each run).\n\n",
    );
    left_table(&mut out, summary, batch);

    if !failures.is_empty() {
        out.push_str(
            "### Failed runs\n\nEach was torn down and left out of the figures above.\n\n\
             | round | system | workload | error |\n|---:|---|---|---|\n",
        );
        for f in failures {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                f.round + 1,
                row_name(&f.system, batch),
                heading(f.workload),
                f.error.replace('|', "\\|").replace('\n', " ")
            );
        }
        out.push('\n');
    }

    out.push_str("### Targets\n\n");
    out.push_str("| target | measured | verdict |\n|---|---|---|\n");
    for v in verdicts(
        summary,
        baseline.as_ref().map(|(_, b)| b),
        is_baseline,
        meta,
    ) {
        let verdict = match v.met {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "–",
        };
        let _ = writeln!(out, "| {} | {} | {verdict} |", v.target, v.measured);
    }
    out.push('\n');

    out.push_str("### Baseline\n\n");
    match &baseline {
        Some((about, base)) => {
            let _ = writeln!(
                out,
                "The run later runs are compared with (`adapters/redis/benches/peers/baseline.tsv`):\n\n```text\n{}\n```\n",
                about.join("\n")
            );
            out.push_str("Jobs per second, as above:\n\n");
            rate_table(&mut out, base, batch);
            out.push_str("Server µs per job, as above:\n\n");
            server_table(&mut out, base, batch);
            out.push_str("Left on the server:\n\n");
            left_table(&mut out, base, batch);
        }
        None => {
            let _ = writeln!(out, "{}.\n", upper_first(crate::verdicts::no_baseline()));
        }
    }

    if !summary.commands.is_empty() {
        out.push_str(
            "<details><summary>Commands per job (this run; calls / µs, medians; * = run by \
             the system's scripts, left out of the sum)</summary>\n\n",
        );
        for system in &summary.systems {
            let mut rows: BTreeMap<(bool, String), BTreeMap<Workload, (f64, f64)>> =
                BTreeMap::new();
            for &w in &summary.workloads {
                for cost in summary
                    .commands
                    .get(&(system.clone(), w))
                    .map_or(&[][..], Vec::as_slice)
                {
                    rows.entry((cost.nested, cost.name.clone()))
                        .or_default()
                        .insert(w, (cost.calls, cost.usec));
                }
            }
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(out, "**{}**\n", row_name(system, batch));
            out.push_str("| command |");
            for &w in &summary.workloads {
                let _ = write!(out, " {} |", heading(w));
            }
            out.push_str("\n|---|");
            for _ in &summary.workloads {
                out.push_str("---:|");
            }
            out.push('\n');
            for ((nested, name), by_workload) in rows {
                let _ = write!(out, "| {name}{} |", if nested { "*" } else { "" });
                for w in &summary.workloads {
                    match by_workload.get(w) {
                        Some((calls, usec)) => {
                            let _ = write!(out, " {calls:.2} / {} |", micros(*usec));
                        }
                        None => out.push_str(" – |"),
                    }
                }
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str("</details>\n\n");
    }
    out
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}
