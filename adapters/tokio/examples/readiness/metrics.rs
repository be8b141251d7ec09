//! `/metrics`: the readiness latch and the job queue's ledger in Prometheus' text format.
//!
//! Everything here is read from the primitives' own accessors (`is_open`, `pending`,
//! `time_to_open`, `failure`, `ledger`), so a scrape costs a few atomic loads and needs no
//! bookkeeping of the service's own.

use std::fmt::Write as _;

use tally_latch::TrackingLatch;
use tally_queue::Ledger;

/// The metrics page for `ready` (whose counters are `components`) and the queue's
/// `ledger`.
pub(crate) fn render(ready: &TrackingLatch, components: &[&str], ledger: &Ledger) -> String {
    let mut out = String::new();
    let pending = ready.pending();
    gauge(
        &mut out,
        "readiness_open",
        "1 once every component has reported",
        &[("", u64::from(ready.is_open()))],
    );
    gauge(
        &mut out,
        "readiness_failed",
        "1 if a component failed before reporting",
        &[("", u64::from(ready.failure().is_some()))],
    );
    let per_component: Vec<(String, u64)> = components
        .iter()
        .map(|name| {
            let waiting = pending.iter().any(|p| p == name);
            (format!("component=\"{name}\""), u64::from(waiting))
        })
        .collect();
    let per_component: Vec<(&str, u64)> = per_component
        .iter()
        .map(|(labels, value)| (labels.as_str(), *value))
        .collect();
    gauge(
        &mut out,
        "readiness_pending",
        "1 while the component has not reported",
        &per_component,
    );
    if let Some(time_to_open) = ready.time_to_open() {
        writeln!(
            out,
            "# HELP readiness_time_to_open_seconds from the latch's creation to its opening\n\
             # TYPE readiness_time_to_open_seconds gauge\n\
             readiness_time_to_open_seconds {:.6}",
            time_to_open.as_secs_f64()
        )
        .unwrap();
    }
    gauge(
        &mut out,
        "jobs",
        "jobs accepted and not yet ended, by where they are",
        &[
            ("state=\"buffered\"", ledger.buffered),
            ("state=\"in_flight\"", ledger.in_flight),
        ],
    );
    counter(
        &mut out,
        "jobs_accepted_total",
        "jobs accepted",
        ledger.accepted,
    );
    let ended = [
        ("outcome=\"succeeded\"", ledger.succeeded),
        ("outcome=\"rejected\"", ledger.rejected),
        ("outcome=\"uncertain\"", ledger.uncertain),
        ("outcome=\"abandoned\"", ledger.abandoned),
        ("outcome=\"discarded\"", ledger.discarded),
    ];
    writeln!(
        out,
        "# HELP jobs_ended_total jobs ended, by how\n# TYPE jobs_ended_total counter"
    )
    .unwrap();
    for (labels, value) in ended {
        writeln!(out, "jobs_ended_total{{{labels}}} {value}").unwrap();
    }
    out
}

fn gauge(out: &mut String, name: &str, help: &str, samples: &[(&str, u64)]) {
    writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge").unwrap();
    for (labels, value) in samples {
        if labels.is_empty() {
            writeln!(out, "{name} {value}").unwrap();
        } else {
            writeln!(out, "{name}{{{labels}}} {value}").unwrap();
        }
    }
}

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
    )
    .unwrap();
}
