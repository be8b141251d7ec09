//! The targets a tally-redis variant is measured against, and their verdicts.

use crate::meta::Meta;
use crate::raw::BATCHED;
use crate::report::{heading, micros, rate, times};
use crate::summary::Summary;
use crate::system::Workload;

/// The targets, against the raw loop batched by the same batch, in the same run.
const CONSUME_TARGET: f64 = 0.6;
const BULK_PUT_TARGET: f64 = 0.4;
const SERVER_US_TARGET: f64 = 10.0;
/// The tally-redis variant whose one-at-a-time path is compared with the baseline.
const ONE_AT_A_TIME: &str = "tally-redis";

pub(crate) struct Verdict {
    pub(crate) target: String,
    pub(crate) measured: String,
    pub(crate) met: Option<bool>,
}

pub(crate) fn verdicts(
    summary: &Summary,
    baseline: Option<&Summary>,
    is_baseline: bool,
    meta: &Meta,
) -> Vec<Verdict> {
    let batch = meta.setup.batch;
    let consumes: Vec<Workload> = summary
        .workloads
        .iter()
        .copied()
        .filter(|w| matches!(w, Workload::Consume(_)))
        .collect();
    let label = |w: Workload| match w {
        Workload::Consume(n) => format!("×{n}"),
        other => other.to_string(),
    };
    let mut out = Vec::new();
    for system in summary
        .systems
        .iter()
        .filter(|s| s.starts_with("tally-redis"))
    {
        // Consume against the raw loop batched.
        let mut parts = Vec::new();
        let mut met = !consumes.is_empty();
        for &w in &consumes {
            match summary
                .cell(system, w)
                .and_then(|c| Some((c, c.vs_batched?)))
            {
                Some((c, r)) => {
                    met &= r.median >= CONSUME_TARGET;
                    let raw = summary.cell(BATCHED, w).map_or(f64::NAN, |b| b.rate);
                    parts.push(format!(
                        "{} {} ({} vs {} jobs/s)",
                        label(w),
                        times(r.median),
                        rate(c.rate),
                        rate(raw)
                    ));
                }
                None => {
                    met = false;
                    parts.push(format!("{} not measured", label(w)));
                }
            }
        }
        out.push(Verdict {
            target: format!(
                "{system}: consume ≥ {CONSUME_TARGET}× the raw loop batched by {batch}, at every consumer count"
            ),
            measured: parts.join("; "),
            met: Some(met),
        });
        // Bulk put against the raw loop batched.
        let bulk = summary.cell(system, Workload::PutBulk);
        let raw_bulk = summary.cell(BATCHED, Workload::PutBulk);
        out.push(Verdict {
            target: format!(
                "{system}: bulk put ≥ {BULK_PUT_TARGET}× the raw loop batched by {batch}"
            ),
            measured: match (bulk, bulk.and_then(|c| c.vs_batched), raw_bulk) {
                (Some(c), Some(r), Some(raw)) => format!(
                    "{} ({} vs {} jobs/s)",
                    times(r.median),
                    rate(c.rate),
                    rate(raw.rate)
                ),
                _ => "not measured".to_string(),
            },
            met: Some(
                bulk.and_then(|c| c.vs_batched)
                    .is_some_and(|r| r.median >= BULK_PUT_TARGET),
            ),
        });
        // Server time per job: a bulk put plus a consume.
        let mut parts = Vec::new();
        let mut met = bulk.is_some() && !consumes.is_empty();
        for &w in &consumes {
            match (bulk, summary.cell(system, w)) {
                (Some(b), Some(c)) => {
                    let sent = b.sent_us + c.sent_us;
                    met &= sent <= SERVER_US_TARGET;
                    parts.push(format!(
                        "{} {} µs (CPU {} µs)",
                        label(w),
                        micros(sent),
                        micros(b.cpu_us + c.cpu_us)
                    ));
                }
                _ => {
                    met = false;
                    parts.push(format!("{} not measured", label(w)));
                }
            }
        }
        out.push(Verdict {
            target: format!(
                "{system}: the server spends ≤ {SERVER_US_TARGET} µs per job at a batch of {batch} \
                 (commands sent, bulk put + consume)"
            ),
            measured: parts.join("; "),
            met: Some(met),
        });
    }
    // The one-at-a-time path against the baseline, each as a ratio to the raw unbatched
    // loop of its own run (the same code in both runs, so the host's drift cancels).
    let target = format!(
        "{ONE_AT_A_TIME}: one at a time no slower than the baseline (put one at a time, and \
         consume with 1 consumer; ÷ the raw unbatched loop of the same run)"
    );
    let one_at_a_time = [Workload::PutOne, Workload::Consume(1)];
    if is_baseline {
        out.push(Verdict {
            target,
            measured: "this run is the baseline".to_string(),
            met: None,
        });
    } else if let Some(baseline) = baseline {
        let mut parts = Vec::new();
        let mut met = true;
        for w in one_at_a_time {
            let now = summary.cell(ONE_AT_A_TIME, w);
            let before = baseline.cell(ONE_AT_A_TIME, w);
            let ratios = (
                now.and_then(|c| c.vs_unbatched),
                before.and_then(|c| c.vs_unbatched),
            );
            match (now.zip(before), ratios) {
                (Some((now_cell, before_cell)), (Some(now), Some(before))) => {
                    met &= now.median >= before.median;
                    parts.push(format!(
                        "{}: {} (rounds {}–{}), baseline {} (rounds {}–{}); server CPU {} µs per \
                         job, baseline {}",
                        heading(w),
                        times(now.median),
                        times(now.lo),
                        times(now.hi),
                        times(before.median),
                        times(before.lo),
                        times(before.hi),
                        micros(now_cell.cpu_us),
                        micros(before_cell.cpu_us)
                    ));
                }
                _ => {
                    met = false;
                    parts.push(format!(
                        "{}: not measured here or in the baseline",
                        heading(w)
                    ));
                }
            }
        }
        out.push(Verdict {
            target,
            measured: parts.join("; "),
            met: Some(met),
        });
    } else {
        out.push(Verdict {
            target,
            measured: no_baseline().to_string(),
            met: None,
        });
    }
    out
}

/// Why there is no baseline to compare with.
pub(crate) fn no_baseline() -> &'static str {
    if std::env::var("REDIS_BENCH_NO_BASELINE").as_deref() == Ok("1") {
        "not compared: the baseline (benches/peers/baseline.tsv) is from another server than \
         this run's"
    } else {
        "no baseline recorded (benches/peers/baseline.tsv)"
    }
}
