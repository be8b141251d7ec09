//! Writes `BENCHMARKS.md` and the SVG chart from one run's results.
//!
//! `report RESULTS CRITERION MARKDOWN SVG`: RESULTS is the folder `benches/report.sh`
//! filled (instructions.tsv, locked.tsv, allocations.tsv, python.tsv, machine.txt,
//! profiles/*.txt),
//! CRITERION the criterion output folder of the same run. Nothing here is measured: every
//! figure comes from those files, except the Redis section, which
//! `adapters/redis/benches/report.sh` writes from a run of its own and which is carried
//! over from MARKDOWN as it is.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

/// Nanoseconds per operation by criterion id (`group/function[/parameter]`).
type Timings = BTreeMap<String, f64>;

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [results, criterion, markdown, svg] = args.as_slice() else {
        eprintln!("usage: report RESULTS CRITERION MARKDOWN SVG");
        std::process::exit(2);
    };
    let timings = read_criterion(criterion);
    assert!(
        !timings.is_empty(),
        "no criterion results under {}",
        criterion.display()
    );
    let instructions = read_tsv(&results.join("instructions.tsv"));
    let allocations = read_tsv(&results.join("allocations.tsv"));
    let python = read_tsv(&results.join("python.tsv"));
    let machine = fs::read_to_string(results.join("machine.txt")).unwrap_or_default();
    let redis = redis_section(&fs::read_to_string(markdown).unwrap_or_default());
    let svg_name = svg.file_name().expect("a file name").to_string_lossy();
    let svg_link = format!("benches/{svg_name}");
    let text = render_markdown(
        &timings,
        &instructions,
        &allocations,
        &python,
        &machine,
        results,
        &redis,
        &svg_link,
    );
    fs::write(markdown, text).expect("write the markdown report");
    draw_chart(&timings, svg).expect("draw the chart");
}

// --------------------------------------------------------------------------- inputs

/// Reads every `new/benchmark.json` + `new/estimates.json` pair: the median per iteration,
/// divided by the elements per iteration where the benchmark declares a throughput.
fn read_criterion(root: &Path) -> Timings {
    let mut timings = Timings::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.ends_with("new/benchmark.json") {
                let folder = path.parent().expect("new/");
                let benchmark = read_json(&path);
                let estimates = read_json(&folder.join("estimates.json"));
                let id = benchmark["full_id"].as_str().expect("full_id").to_owned();
                let median = estimates["median"]["point_estimate"]
                    .as_f64()
                    .expect("median");
                let per_iteration = benchmark["throughput"]["Elements"].as_f64().unwrap_or(1.0);
                timings.insert(id, median / per_iteration);
            }
        }
    }
    timings
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `name \t value ...` lines (comments start with `#`): name to first value.
fn read_tsv(path: &Path) -> BTreeMap<String, f64> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next()?.trim().to_owned();
            let value = fields.next()?.split_whitespace().next()?.parse().ok()?;
            Some((name, value))
        })
        .collect()
}

/// `name \t locked/op \t instructions/op` lines of `locked.tsv`: name to both.
fn read_locked(path: &Path) -> BTreeMap<String, (f64, f64)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next()?.trim().to_owned();
            let locked = fields.next()?.trim().parse().ok()?;
            let instructions = fields.next()?.trim().parse().ok()?;
            Some((name, (locked, instructions)))
        })
        .collect()
}

/// `name \t N \t bytes per item` lines of `memory.tsv` (`src/bin/memory.rs`): name to
/// bytes per item.
fn read_memory(path: &Path) -> BTreeMap<String, f64> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            Some((
                fields.first()?.trim().to_owned(),
                fields.get(2)?.trim().parse().ok()?,
            ))
        })
        .collect()
}

/// The lines that open and close the Redis section (`adapters/redis/benches/report.sh`
/// writes them), and the Redis 8.6 section (the same script with `REDIS8=1`).
const REDIS_BEGIN: &str = "<!-- redis section: begin";
const REDIS_END: &str = "<!-- redis section: end -->";
const REDIS8_BEGIN: &str = "<!-- redis 8 section: begin";
const REDIS8_END: &str = "<!-- redis 8 section: end -->";

/// The Redis sections of the existing report, markers included: the Redis section, or a
/// placeholder between markers if it has none, then the Redis 8.6 section if it has one.
fn redis_section(existing: &str) -> String {
    let redis = kept(existing, REDIS_BEGIN, REDIS_END).unwrap_or_else(|| {
        format!(
            "{REDIS_BEGIN} (adapters/redis/benches/report.sh writes it) -->\n## Redis\n\nNot \
             measured yet: `bash adapters/redis/benches/report.sh` writes this section.\n\n\
             {REDIS_END}\n\n"
        )
    });
    let redis8 = kept(existing, REDIS8_BEGIN, REDIS8_END).unwrap_or_default();
    redis + &redis8
}

/// The lines of `existing` from the one that starts with `begin` to the first after it
/// that is `end`, both included, if both are there.
fn kept(existing: &str, begin: &str, end: &str) -> Option<String> {
    let lines: Vec<&str> = existing.lines().collect();
    let first = lines.iter().position(|line| line.starts_with(begin))?;
    let last = first + lines[first..].iter().position(|line| *line == end)?;
    Some(format!("{}\n\n", lines[first..=last].join("\n")))
}

/// The speed targets of the engine: instructions per message, locked instructions,
/// allocations per wait, heap bytes per queued item and wall clock, each against the
/// peers of the same run. A target with no figure in this run reads "not measured".
#[allow(clippy::too_many_lines)]
fn speed_targets(
    timings: &Timings,
    instructions: &BTreeMap<String, f64>,
    locked: &BTreeMap<String, (f64, f64)>,
    allocations: &BTreeMap<String, f64>,
    memory: &BTreeMap<String, f64>,
) -> Vec<Target> {
    let mut rows = Vec::new();
    let short = |id: &str| id.trim_start_matches("queue/").replace("/ours", "");

    // Instructions per message against flume, every shape counted with both.
    let shapes: Vec<(String, f64, f64)> = instructions
        .iter()
        .filter(|(id, _)| id.starts_with("queue/") && id.ends_with("/ours"))
        .filter_map(|(id, &ours)| {
            let flume = *instructions.get(&id.replace("/ours", "/flume"))?;
            Some((short(id), ours, flume))
        })
        .collect();
    rows.push(Target {
        what: "every shape at or below 1.0× flume in instructions per message",
        measured: shapes
            .iter()
            .map(|(shape, ours, flume)| {
                format!("{shape} {:.2}× ({ours:.0} vs {flume:.0})", ours / flume)
            })
            .collect::<Vec<_>>()
            .join(", "),
        met: (!shapes.is_empty()).then(|| shapes.iter().all(|(_, ours, flume)| ours <= flume)),
    });

    // Wall clock against flume and kanal, every group measured with the peer.
    for (peer, at_most, what) in [
        (
            "flume",
            1.0,
            "every shape at or below 1.0× flume in wall clock",
        ),
        (
            "kanal",
            1.5,
            "every shape at or below 1.5× kanal in wall clock (aim: 1.0×)",
        ),
    ] {
        let found: Vec<(String, f64)> = timings
            .iter()
            .filter(|(id, _)| id.starts_with("queue/") && id.ends_with("/ours"))
            .filter_map(|(id, &ours)| {
                Some((
                    short(id),
                    ours / timings.get(&id.replace("/ours", &format!("/{peer}")))?,
                ))
            })
            .collect();
        let above: Vec<String> = found
            .iter()
            .filter(|(_, r)| *r > at_most)
            .map(|(shape, r)| format!("{shape} {r:.2}×"))
            .collect();
        let best = found.iter().map(|(_, r)| *r).fold(f64::MAX, f64::min);
        rows.push(Target {
            what,
            measured: if above.is_empty() {
                format!(
                    "all {} shapes (highest {:.2}×)",
                    found.len(),
                    found.iter().map(|(_, r)| *r).fold(0.0, f64::max)
                )
            } else {
                format!(
                    "above in {} of {}: {} (lowest {best:.2}×)",
                    above.len(),
                    found.len(),
                    above.join(", ")
                )
            },
            met: (!found.is_empty()).then_some(above.is_empty()),
        });
    }

    // Unbounded: locked instructions and instructions against flume.
    let unbounded = locked.get("queue/floor-unbounded/ours");
    let unbounded_flume = instructions.get("queue/floor-unbounded/flume");
    rows.push(Target {
        what: "unbounded: ≤ 4 locked instructions per message and ≤ flume's instructions",
        measured: match (unbounded, unbounded_flume) {
            (Some((l, i)), Some(flume)) => {
                format!("floor-unbounded: ours {l:.2} locked, {i:.0} instr; flume {flume:.0} instr")
            }
            _ => "not counted".to_owned(),
        },
        met: unbounded
            .zip(unbounded_flume)
            .map(|(&(l, i), &flume)| l <= 4.0 && i <= flume),
    });

    // 64×64 against flume.
    let wide = instructions.get("queue/local/mpmc64x64-bounded128/ours");
    let wide_flume = instructions.get("queue/local/mpmc64x64-bounded128/flume");
    rows.push(Target {
        what: "MPMC 64×64: ≤ flume's instructions per message",
        measured: match (wide, wide_flume) {
            (Some(ours), Some(flume)) => {
                format!("ours {ours:.0}, flume {flume:.0} ({:.2}×)", ours / flume)
            }
            _ => "not counted".to_owned(),
        },
        met: wide.zip(wide_flume).map(|(ours, flume)| ours <= flume),
    });

    // Allocations per wait.
    let per_wait: Vec<String> = ["ours", "flume", "async-channel", "kanal"]
        .iter()
        .filter_map(|name| {
            let a = allocations.get(&format!("queue/wait/{name}"))?;
            Some(format!("{name} {a:.2}"))
        })
        .collect();
    let ours_per_wait = allocations.get("queue/wait/ours");
    rows.push(Target {
        what: "≤ 1 allocation per wait (a get polled on an empty queue, woken by a put)",
        measured: if per_wait.is_empty() {
            "not counted".to_owned()
        } else {
            per_wait.join(", ")
        },
        met: ours_per_wait.map(|a| *a <= 1.0),
    });

    // Heap bytes per queued u64.
    let shapes = ["bounded(1024) full", "unbounded"];
    let bytes: Vec<(&str, f64)> = shapes
        .iter()
        .filter_map(|shape| Some((*shape, *memory.get(&format!("{shape}/ours"))?)))
        .collect();
    let peers = |shape: &str| -> String {
        ["flume", "kanal", "async-channel"]
            .iter()
            .filter_map(|peer| {
                let b = memory.get(&format!("{shape}/{peer}"))?;
                Some(format!("{peer} {b:.2}"))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    rows.push(Target {
        what: "≤ 16 heap bytes per queued `u64`, bounded and unbounded",
        measured: bytes
            .iter()
            .map(|(shape, b)| format!("{shape}: ours {b:.2} ({})", peers(shape)))
            .collect::<Vec<_>>()
            .join("; "),
        met: (bytes.len() == shapes.len()).then(|| bytes.iter().all(|(_, b)| *b <= 16.0)),
    });

    // The floor.
    if let Some(&(ours_locked, ours_instructions)) = locked.get("queue/floor/ours") {
        let peers: Vec<String> = ["flume", "kanal", "async-channel"]
            .iter()
            .filter_map(|peer| {
                locked
                    .get(&format!("queue/floor/{peer}"))
                    .map(|(l, i)| format!("{peer} {l:.1} locked, {i:.0} instr"))
            })
            .collect();
        rows.push(Target {
            what: "floor (try_put + try_get + succeed, nobody waiting): ≤ 94 instructions per message with 3 locked",
            measured: format!(
                "ours {ours_instructions:.0} instr, {ours_locked:.1} locked; {}",
                peers.join("; ")
            ),
            met: Some(ours_instructions <= 94.0 && ours_locked <= 3.0),
        });
    }
    rows
}

// ------------------------------------------------------------------------- markdown

/// The sibling ids of an id holding `ours`: the same id with another name in that place.
fn peers_of<'a>(timings: &'a Timings, id: &str) -> Vec<(&'a str, f64)> {
    let segments: Vec<&str> = id.split('/').collect();
    let Some(position) = segments.iter().position(|s| *s == "ours") else {
        return Vec::new();
    };
    timings
        .iter()
        .filter_map(|(other, &ns)| {
            let others: Vec<&str> = other.split('/').collect();
            let same_place = others.len() == segments.len()
                && others
                    .iter()
                    .zip(&segments)
                    .enumerate()
                    .all(|(i, (a, b))| i == position || a == b);
            (same_place && others[position] != "ours").then(|| (others[position], ns))
        })
        .collect()
}

fn ns(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// A ratio table: each benchmark of ours against every peer measured with it.
fn ratio_table(out: &mut String, timings: &Timings, prefix: &str) {
    out.push_str("| benchmark | ours (ns/op) | peer | peer (ns/op) | ours ÷ peer |\n");
    out.push_str("|---|---:|---|---:|---:|\n");
    for (id, &ours) in timings
        .iter()
        .filter(|(id, _)| id.starts_with(prefix) && id.split('/').any(|s| s == "ours"))
    {
        let label = id.replace("/ours", "");
        for (peer, theirs) in peers_of(timings, id) {
            let _ = writeln!(
                out,
                "| {label} | {} | {peer} | {} | **{:.2}** |",
                ns(ours),
                ns(theirs),
                ours / theirs
            );
        }
    }
    out.push('\n');
}

/// A target row: what, measured, met or missed.
struct Target {
    what: &'static str,
    measured: String,
    met: Option<bool>,
}

fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met",
        Some(false) => "**missed**",
        None => "not measured",
    }
}

#[allow(clippy::too_many_lines)]
fn targets(
    timings: &Timings,
    instructions: &BTreeMap<String, f64>,
    allocations: &BTreeMap<String, f64>,
    python: &BTreeMap<String, f64>,
) -> Vec<Target> {
    let t = |id: &str| timings.get(id).copied();
    let i = |id: &str| instructions.get(id).copied();
    let mut rows = Vec::new();

    // Queue vs async-channel, every wall-clock group and both instruction counts.
    let mut above = Vec::new();
    let mut groups = 0;
    for (id, &ours) in timings.iter().filter(|(id, _)| {
        id.starts_with("queue/") && id.ends_with("/ours") && !id.starts_with("queue/blocking/")
            || id.starts_with("queue/blocking/") && id.ends_with("/ours")
    }) {
        if let Some(theirs) = t(&id.replace("/ours", "/async-channel")) {
            groups += 1;
            if ours > theirs {
                above.push(format!(
                    "{} ({:.2}×)",
                    id.replace("/ours", ""),
                    ours / theirs
                ));
            }
        }
    }
    rows.push(Target {
        what: "queue put+get+resolve never above async-channel send+recv (wall clock, every group)",
        measured: if above.is_empty() {
            format!("at or below in all {groups} groups")
        } else {
            format!("above in {} of {groups}: {}", above.len(), above.join(", "))
        },
        met: (groups > 0).then_some(above.is_empty()),
    });
    for shape in ["spsc", "mpmc4x4"] {
        let ours = i(&format!("queue/local/{shape}-bounded128/ours"));
        let ac = i(&format!("queue/local/{shape}-bounded128/async-channel"));
        let flume = i(&format!("queue/local/{shape}-bounded128/flume"));
        if let (Some(ours), Some(ac), Some(flume)) = (ours, ac, flume) {
            rows.push(Target {
                what: if shape == "spsc" {
                    "instructions/msg, SPSC bounded(128) single thread: not above async-channel"
                } else {
                    "instructions/msg, MPMC 4×4 bounded(128) single thread: not above async-channel"
                },
                measured: format!("ours {ours:.0}, async-channel {ac:.0}, flume {flume:.0}"),
                met: Some(ours <= ac),
            });
        }
    }
    // The engine's wall-clock targets: ratios to a peer measured in the same run.
    let ratio = |group: &str, peer: &str| -> Option<f64> {
        Some(t(&format!("{group}/ours"))? / t(&format!("{group}/{peer}"))?)
    };
    let ratios = |what: &'static str, peer: &str, groups: &[&str], at_most: f64| {
        let found: Vec<(&str, f64)> = groups
            .iter()
            .filter_map(|group| Some((*group, ratio(group, peer)?)))
            .collect();
        Target {
            what,
            measured: found
                .iter()
                .map(|(group, r)| format!("{} {r:.2}×", group.trim_start_matches("queue/")))
                .collect::<Vec<_>>()
                .join(", "),
            met: (found.len() == groups.len()).then(|| found.iter().all(|(_, r)| *r <= at_most)),
        }
    };
    rows.push(ratios(
        "blocking SPSC across 2 threads: wall clock ≤ 1.0× async-channel",
        "async-channel",
        &["queue/blocking/spsc-bounded128"],
        1.0,
    ));
    rows.push(ratios(
        "unbounded: wall clock not above async-channel's unbounded",
        "async-channel",
        &[
            "queue/local/mpmc4x4-unbounded",
            "queue/blocking/spsc-unbounded",
            "queue/blocking/mpmc4x4-unbounded",
        ],
        1.0,
    ));
    let scaled: Vec<(f64, f64)> = [1, 2, 4, 8, 16, 32, 64]
        .iter()
        .filter_map(|n| {
            let ours = t(&format!("scaling/smol2-bounded128/ours/{n}"))?;
            let flume = t(&format!("scaling/smol2-bounded128/flume/{n}"))?;
            Some((f64::from(*n), ours / flume))
        })
        .collect();
    // Every point, or no verdict: one point alone would always read flat.
    if scaled.len() == 7 {
        let max = scaled.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let min = scaled.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        rows.push(Target {
            what: "flat against flume from 1 to 64 producers/consumers: max ÷ min of ours ÷ flume ≤ 1.5",
            measured: format!(
                "{:.2} ({})",
                max / min,
                scaled
                    .iter()
                    .map(|(n, r)| format!("{n}: {r:.2}×"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            met: Some(max / min <= 1.5),
        });
    }
    // Python.
    let pairs = [
        ("one-task", "queue/floor/ours"),
        ("spsc-bounded128", "queue/local/spsc-bounded128/ours"),
        ("mpmc4x4-bounded128", "queue/local/mpmc4x4-bounded128/ours"),
    ];
    let mut speedups = Vec::new();
    for (py, ours) in pairs {
        if let (Some(py_ns), Some(ours_ns)) = (python.get(py), t(ours)) {
            speedups.push((py, py_ns / ours_ns));
        }
    }
    rows.push(Target {
        what: "at least 20× faster than CPython 3.13 asyncio.Queue per item",
        measured: speedups
            .iter()
            .map(|(name, x)| format!("{name} {x:.0}×"))
            .collect::<Vec<_>>()
            .join(", "),
        met: (!speedups.is_empty()).then(|| speedups.iter().all(|(_, x)| *x >= 20.0)),
    });
    // Latch.
    if let (Some(ours), Some(raw)) = (
        t("latch/count_down/ours"),
        t("latch/count_down/raw-fetch-sub"),
    ) {
        rows.push(Target {
            what: "latch count-down within 1.1× a raw fetch_sub (wall clock)",
            measured: format!(
                "{:.2}× ({} vs {} ns); instructions {} vs {}",
                ours / raw,
                ns(ours),
                ns(raw),
                i("latch/count_down/ours").map_or("?".into(), |v| format!("{v:.0}")),
                i("latch/count_down/raw-fetch-sub").map_or("?".into(), |v| format!("{v:.0}")),
            ),
            met: Some(ours <= raw * 1.1),
        });
    }
    if let (Some(ours), Some(raw), Some(latches)) = (
        t("latch/wait_open/ours"),
        t("latch/wait_open/raw-load"),
        t("latch/wait_open/latches"),
    ) {
        let ours_i = i("latch/wait_open/ours");
        let raw_i = i("latch/wait_open/raw-load");
        rows.push(Target {
            what: "wait on an open latch about one atomic load (as fast as `latches`)",
            measured: format!(
                "{} ns vs raw load {} ns, latches {} ns; instructions {} vs {} (raw), {} (latches)",
                ns(ours),
                ns(raw),
                ns(latches),
                ours_i.map_or("?".into(), |v| format!("{v:.0}")),
                raw_i.map_or("?".into(), |v| format!("{v:.0}")),
                i("latch/wait_open/latches").map_or("?".into(), |v| format!("{v:.0}")),
            ),
            met: Some(ours <= latches * 1.1 && ours <= raw * 2.0),
        });
    }
    if let Some(ours_i) = i("latch/open_no_waiters/ours") {
        let allocs = allocations.get("latch/open_no_waiters/ours").copied();
        rows.push(Target {
            what: "opening a latch nobody waited on: under 60 instructions, no allocation",
            measured: format!(
                "{ours_i:.0} instructions (new + final count-down + drop), {} allocations",
                allocs.map_or("?".into(), |a| format!("{a}"))
            ),
            met: Some(ours_i < 60.0 && allocs == Some(0.0)),
        });
    }
    if let (Some(ours), Some(notify)) = (
        t("latch/release/ours/1000"),
        t("latch/release/tokio-notify/1000"),
    ) {
        rows.push(Target {
            what: "release of 1000 waiters ≤ 0.9× tokio Notify",
            measured: format!(
                "{:.2}× ({} vs {} ns per waiter); instructions per waiter {} vs {}",
                ours / notify,
                ns(ours),
                ns(notify),
                i("latch/release1000/ours").map_or("?".into(), |v| format!("{v:.0}")),
                i("latch/release1000/tokio-notify").map_or("?".into(), |v| format!("{v:.0}")),
            ),
            met: Some(ours <= 0.9 * notify),
        });
    }
    // Allocations.
    let quiet = allocations.get("queue/floor/ours").copied();
    let waiting = allocations.get("queue/local/spsc-bounded128/ours").copied();
    if let (Some(quiet), Some(waiting)) = (quiet, waiting) {
        rows.push(Target {
            what: "zero heap allocations per message, steady-state bounded queue",
            measured: format!(
                "{quiet} per message when no put or get waits; {waiting:.4} per message in the \
                 SPSC bounded(128) executor workload, where a get or put waits"
            ),
            met: Some(quiet == 0.0 && waiting == 0.0),
        });
    }
    // Flat curves.
    let curve = |prefix: &str| -> Vec<(f64, f64)> {
        let mut points: Vec<(f64, f64)> = timings
            .iter()
            .filter_map(|(id, &ns)| {
                let rest = id.strip_prefix(prefix)?;
                Some((rest.parse::<f64>().ok()?, ns))
            })
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        points
    };
    for (what, prefix) in [
        (
            "flat cost per message from 1 to 64 producers/consumers (max ÷ min ≤ 2)",
            "scaling/smol2-bounded128/ours/",
        ),
        (
            "flat cost per waiter from 1 to 10,000 waiters (max ÷ min ≤ 2)",
            "latch/release/ours/",
        ),
    ] {
        let points = curve(prefix);
        if points.is_empty() {
            continue;
        }
        let max = points.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let min = points.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        let listing = points
            .iter()
            .map(|(x, y)| format!("{x}: {}", ns(*y)))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push(Target {
            what,
            measured: format!("max ÷ min {:.2} ({listing} ns)", max / min),
            met: Some(max / min <= 2.0),
        });
    }
    rows
}

#[allow(clippy::too_many_arguments)]
fn render_markdown(
    timings: &Timings,
    instructions: &BTreeMap<String, f64>,
    allocations: &BTreeMap<String, f64>,
    python: &BTreeMap<String, f64>,
    machine: &str,
    results: &Path,
    redis: &str,
    svg_link: &str,
) -> String {
    let mut out = String::new();
    out.push_str("# Benchmarks\n\n");
    out.push_str(
        "Generated by `benches/report.sh` from one run: every ratio below compares figures \
         measured in the same run, on the machine described here. Regenerate with:\n\n\
         ```sh\nbash benches/report.sh\n```\n\n",
    );
    out.push_str("## Machine\n\n```text\n");
    out.push_str(machine.trim());
    out.push_str("\n```\n\n");
    let _ = writeln!(out, "![main comparisons and scaling curves]({svg_link})\n");
    out.push_str(
        "How to read: wall-clock figures are criterion medians (20 samples, 2 s measurement) \
         in ns per operation (per message for the queues, per waiter for releases). \
         `ours ÷ peer` below 1 means ours is faster. Our queue always does put + get + \
         resolve (`Delivery::succeed`) and a `join` at the end; the channels do send + recv. \
         Instruction counts are callgrind's, exact and repeatable: (count at N − count at 0) \
         ÷ N. The VM is shared and noisy: trust the instruction counts for small \
         differences, the wall clock for the cost of atomics and contention.\n\n",
    );

    let locked = read_locked(&results.join("locked.tsv"));
    let memory = read_memory(&results.join("memory.tsv"));
    out.push_str("## Targets\n\n| target | measured | verdict |\n|---|---|---|\n");
    for target in targets(timings, instructions, allocations, python)
        .into_iter()
        .chain(speed_targets(
            timings,
            instructions,
            &locked,
            allocations,
            &memory,
        ))
    {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            target.what,
            target.measured,
            verdict(target.met)
        );
    }
    out.push('\n');
    if let Ok(notes) = fs::read_to_string(Path::new("benches/NOTES.md")) {
        out.push_str(&notes);
        out.push('\n');
    }

    if !locked.is_empty() {
        out.push_str("## Locked instructions per message (callgrind + objdump)\n\n");
        out.push_str("| workload | locked/op | instructions/op |\n|---|---:|---:|\n");
        for (name, (l, i)) in &locked {
            let _ = writeln!(out, "| {name} | {l:.2} | {i:.1} |");
        }
        out.push_str(
            "\nCounted by `shared/tools/locked-per-op`: callgrind's per-instruction counts \
             (`--dump-instr=yes`, run at N and at 0) matched against the `lock`-prefixed, \
             `xchg`-with-memory and `mfence` instructions that `objdump` finds in the binary. \
             A locked instruction is one instruction to callgrind but about 20 cycles to the \
             CPU. `engine/ring-floor` is the ring engine alone (put + get + ending on a \
             counting ring bound at 128, nobody waiting; tally-queue's unit test \
             `ring::tests::floor_ops_from_env`), which a bounded queue's put, get and \
             resolve run on. The per-instruction tables are in the run's `locked/` \
             folder.\n\n",
        );
    }

    out.push_str(&benches::batch::section(results));

    if !memory.is_empty() {
        out.push_str("## Heap bytes per queued `u64`\n\n| queue | bytes per item |\n|---|---:|\n");
        for (name, bytes) in &memory {
            let _ = writeln!(out, "| {name} | {bytes:.2} |");
        }
        out.push_str(
            "\nEverything a queue holds on the heap with N items queued (its empty state \
             included), over N, as requested from the allocator (`src/bin/memory.rs`): \
             bounded at capacity 1,024 and full, unbounded with 100,000 items.\n\n",
        );
    }

    out.push_str("## Instructions per operation (callgrind)\n\n");
    out.push_str("| workload | instructions/op | allocations/op |\n|---|---:|---:|\n");
    for (name, value) in instructions {
        let allocs = allocations
            .get(name)
            .map_or("–".to_owned(), |a| format!("{a}"));
        let _ = writeln!(out, "| {name} | {value:.1} | {allocs} |");
    }
    out.push_str(
        "\nAllocations per operation come from a counting global allocator \
         (`src/bin/alloc_count.rs`): the allocations of a run with 2N operations minus those \
         of a run with N, divided by N, so set-up cancels out.\n\n",
    );

    out.push_str("## CPython 3.13 asyncio.Queue, same run\n\n");
    out.push_str("| workload | CPython ns/item | ours ns/item | ours faster by |\n");
    out.push_str("|---|---:|---:|---:|\n");
    for (py, ours) in [
        ("one-task", "queue/floor/ours"),
        ("spsc-bounded128", "queue/local/spsc-bounded128/ours"),
        ("mpmc4x4-bounded128", "queue/local/mpmc4x4-bounded128/ours"),
    ] {
        if let (Some(py_ns), Some(ours_ns)) = (python.get(py), timings.get(ours)) {
            let _ = writeln!(
                out,
                "| {py} (vs `{ours}`) | {py_ns:.0} | {} | {:.0}× |",
                ns(*ours_ns),
                py_ns / ours_ns
            );
        }
    }
    out.push_str(
        "\nCPython: `put_nowait` + `get_nowait` + `task_done` in one task, and 1+1 / 4+4 \
         tasks (`await put`, `await get` + `task_done`) at maxsize 128, each ending with \
         `join` (`benches/python/asyncio_queue.py`). Ours: the same shapes on a \
         single-thread executor.\n\n",
    );

    out.push_str(redis);

    out.push_str("## Latch, wall clock\n\n");
    ratio_table(&mut out, timings, "latch/");
    out.push_str(
        "`task-tracker` count-down is a token taken and dropped (a tracker counts tasks, not \
         events); `async-lock-barrier` is a barrier of N + 1 whose last arrival releases the \
         others, a contrast rather than a substitute. Release: N tasks wait on a \
         single-thread executor; the time runs from the opening call until every task has \
         resumed, divided by N.\n\n",
    );
    out.push_str("## Queue, wall clock\n\n");
    out.push_str(
        "`local`: one thread, `async-executor`'s `LocalExecutor` under `block_on`; `smol2`: a \
         smol `Executor` run by two threads; `blocking`: one OS thread per producer and \
         consumer. 10,000 messages per iteration; `tokio-mpsc+tracker` carries a \
         `TaskTracker` token with each message and waits on the tracker at the end.\n\n",
    );
    ratio_table(&mut out, timings, "queue/");
    out.push_str("## Scaling\n\n");
    ratio_table(&mut out, timings, "scaling/");

    let profiles = results.join("profiles");
    if let Ok(entries) = fs::read_dir(&profiles) {
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        if !files.is_empty() {
            out.push_str("## Profiles (callgrind, hot functions of our side)\n\n");
            out.push_str(
                "Self instruction counts for the run with N operations (`callgrind_annotate`), \
                 the evidence for the targets above.\n\n",
            );
        }
        for file in files {
            let name = file.file_stem().unwrap_or_default().to_string_lossy();
            let text = fs::read_to_string(&file).unwrap_or_default();
            let _ = writeln!(
                out,
                "<details><summary>{name}</summary>\n\n```text\n{}\n```\n</details>\n",
                text.trim()
            );
        }
    }
    out
}

// ---------------------------------------------------------------------------- chart

const PEER_COLORS: [(&str, RGBColor); 11] = [
    ("ours", RGBColor(214, 39, 40)),
    ("async-channel", RGBColor(31, 119, 180)),
    ("flume", RGBColor(44, 160, 44)),
    ("kanal", RGBColor(255, 127, 14)),
    ("tokio-mpsc", RGBColor(148, 103, 189)),
    ("tokio-mpsc+tracker", RGBColor(140, 86, 75)),
    ("crossbeam-channel", RGBColor(127, 127, 127)),
    ("tokio-notify", RGBColor(148, 103, 189)),
    ("latches", RGBColor(31, 119, 180)),
    ("wg", RGBColor(44, 160, 44)),
    ("task-tracker", RGBColor(140, 86, 75)),
];

fn color_of(peer: &str) -> RGBColor {
    PEER_COLORS
        .iter()
        .find(|(name, _)| *name == peer)
        .map_or(RGBColor(188, 189, 34), |(_, color)| *color)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Error = Box<dyn std::error::Error>;

/// Grouped bars: for each (label, group id prefix), one bar per peer (`peers`), in ns.
fn grouped_bars(
    area: &Area<'_>,
    title: &str,
    timings: &Timings,
    groups: &[(&str, &str)],
    peers: &[&str],
) -> Result<(), Error> {
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|(_, prefix)| peers.iter().map(move |p| format!("{prefix}/{p}")))
        .filter_map(|id| timings.get(&id).copied())
        .collect();
    let max = values.iter().copied().fold(1.0_f64, f64::max) * 2.0;
    let base = values.iter().copied().fold(f64::MAX, f64::min).min(max) * 0.5;
    let labels: Vec<&str> = groups.iter().map(|(label, _)| *label).collect();
    #[allow(clippy::cast_precision_loss)]
    let width = groups.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..width, (base..max).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let fraction = x.fract();
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let index = x.floor() as usize;
            if (fraction - 0.5).abs() < 0.01 {
                labels.get(index).map_or(String::new(), |l| (*l).to_owned())
            } else {
                String::new()
            }
        })
        .y_desc("ns per op (log scale)")
        .y_label_formatter(&|y| tick(*y))
        .draw()?;
    #[allow(clippy::cast_precision_loss)]
    let slot = 0.8 / peers.len() as f64;
    for (p, peer) in peers.iter().enumerate() {
        let color = color_of(peer);
        let bars: Vec<_> = groups
            .iter()
            .enumerate()
            .filter_map(|(g, (_, prefix))| {
                let value = timings.get(&format!("{prefix}/{peer}"))?;
                #[allow(clippy::cast_precision_loss)]
                let x0 = g as f64 + 0.1 + slot * p as f64;
                Some(Rectangle::new(
                    [(x0, base), (x0 + slot * 0.9, *value)],
                    color.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(*peer)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()?;
    Ok(())
}

/// Curves on a log x axis: for each peer, the points `prefix/peer/x`.
fn curves(
    area: &Area<'_>,
    title: &str,
    x_desc: &str,
    timings: &Timings,
    prefix: &str,
    peers: &[&str],
) -> Result<(), Error> {
    let series: Vec<(&str, Vec<(f64, f64)>)> = peers
        .iter()
        .map(|peer| {
            let head = format!("{prefix}/{peer}/");
            let mut points: Vec<(f64, f64)> = timings
                .iter()
                .filter_map(|(id, &ns)| Some((id.strip_prefix(&head)?.parse().ok()?, ns)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (*peer, points)
        })
        .filter(|(_, points)| !points.is_empty())
        .collect();
    let all = series.iter().flat_map(|(_, points)| points.iter());
    let (x_max, y_max) = all.fold((1.0_f64, 1.0_f64), |(x, hi), p| (x.max(p.0), hi.max(p.1)));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d((1.0..x_max * 1.2).log_scale(), 0.0..y_max * 1.3)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("ns per op")
        .x_labels(8)
        .light_line_style(WHITE)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| tick(*y))
        .draw()?;
    for (peer, points) in series {
        let color = color_of(peer);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(peer)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2)));
        chart.draw_series(
            points
                .into_iter()
                .map(move |p| Circle::new(p, 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()?;
    Ok(())
}

fn draw_chart(timings: &Timings, path: &Path) -> Result<(), Error> {
    let root = SVGBackend::new(path, (1400, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "tally-latch and tally-queue against their peers (ns per op, lower is better)",
        ("sans-serif", 22),
    )?;
    let panels = root.split_evenly((2, 2));
    grouped_bars(
        &panels[0],
        "Queue, bounded(128): ns per message",
        timings,
        &[
            ("local SPSC", "queue/local/spsc-bounded128"),
            ("local MPMC 4x4", "queue/local/mpmc4x4-bounded128"),
            ("smol2 SPSC", "queue/smol2/spsc-bounded128"),
            ("smol2 MPMC 4x4", "queue/smol2/mpmc4x4-bounded128"),
            ("threads SPSC", "queue/blocking/spsc-bounded128"),
            ("threads MPMC 4x4", "queue/blocking/mpmc4x4-bounded128"),
        ],
        &[
            "ours",
            "async-channel",
            "flume",
            "kanal",
            "tokio-mpsc",
            "tokio-mpsc+tracker",
            "crossbeam-channel",
        ],
    )?;
    grouped_bars(
        &panels[1],
        "Latch: ns per operation",
        timings,
        &[
            ("count-down", "latch/count_down"),
            ("open, no waiters", "latch/open_no_waiters"),
            ("wait on open", "latch/wait_open"),
            ("2-thread count-down", "latch/contended_count_down"),
        ],
        &[
            "ours",
            "raw-fetch-sub",
            "raw-load",
            "tokio-notify",
            "latches",
            "wg",
            "task-tracker",
        ],
    )?;
    curves(
        &panels[2],
        "Scaling: MPMC NxN, bounded(128), smol 2 threads",
        "producers = consumers",
        timings,
        "scaling/smol2-bounded128",
        &["ours", "async-channel", "flume", "kanal"],
    )?;
    curves(
        &panels[3],
        "Scaling: release of N waiters, per waiter",
        "waiters",
        timings,
        "latch/release",
        &[
            "ours",
            "tokio-notify",
            "latches",
            "wg",
            "task-tracker",
            "async-lock-barrier",
        ],
    )?;
    root.present()?;
    Ok(())
}

/// An axis tick: whole numbers from 10 up, one decimal below.
fn tick(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::{redis_section, REDIS8_BEGIN, REDIS8_END, REDIS_BEGIN, REDIS_END};

    /// A rewrite keeps both Redis sections, markers included, and drops what lies around
    /// them (the rest of the report is written afresh).
    #[test]
    fn a_rewrite_keeps_the_redis_section_and_the_redis_8_section() {
        let existing = format!(
            "# Report\n\nold figures\n\n{REDIS_BEGIN} (x) -->\n## Redis\n\n7.0 rows\n{REDIS_END}\n\n\
             {REDIS8_BEGIN} (y) -->\n## Redis 8.6, with chasquimq\n\n8.6 rows\n{REDIS8_END}\n\n\
             ## Latch, wall clock\n"
        );
        let kept = redis_section(&existing);
        assert_eq!(
            kept,
            format!(
                "{REDIS_BEGIN} (x) -->\n## Redis\n\n7.0 rows\n{REDIS_END}\n\n\
                 {REDIS8_BEGIN} (y) -->\n## Redis 8.6, with chasquimq\n\n8.6 rows\n{REDIS8_END}\n\n"
            )
        );
    }

    /// With no Redis section yet, a placeholder between the markers; no Redis 8.6 section
    /// is made up.
    #[test]
    fn a_report_without_redis_sections_gets_a_placeholder_only() {
        let kept = redis_section("# Report\n");
        assert!(kept.starts_with(REDIS_BEGIN) && kept.ends_with(&format!("{REDIS_END}\n\n")));
        assert!(!kept.contains(REDIS8_BEGIN));
    }
}
