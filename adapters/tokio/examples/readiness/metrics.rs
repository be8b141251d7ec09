//! `/metrics`: the readiness latch and the job queue through the `metrics` facade, rendered
//! by `metrics-exporter-prometheus` in Prometheus' text format.
//!
//! The recorder is installed once per process (the first service to start installs it).
//! A scrape first has the primitives record their figures (`record_metrics`: the ledger
//! and the latch, under each one's label, at that instant), adds the one figure that is
//! this service's own (which component is pending), then renders. The per-event figures
//! (each delivery's time in flight, the latch's time to open) were recorded as they
//! happened.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tally_latch::TrackingLatch;
use tally_queue::Queue;

/// The process's Prometheus recorder, installed on first use.
fn exporter() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        PrometheusBuilder::new()
            .install_recorder()
            .expect("no other metrics recorder is installed")
    })
}

/// Installs the recorder now, so that events before the first scrape are recorded.
pub(crate) fn install() {
    exporter();
}

/// The metrics page: `ready` (whose counters are `components`) and `jobs`, and whatever
/// else this process records.
pub(crate) fn render(
    ready: &TrackingLatch,
    components: &[&'static str],
    jobs: &Queue<String>,
) -> String {
    ready.record_metrics();
    jobs.record_metrics();
    let pending = ready.pending();
    for &component in components {
        let waiting = pending.contains(&component);
        metrics::gauge!("readiness_pending", "latch" => ready.label(), "component" => component)
            .set(f64::from(u8::from(waiting)));
    }
    exporter().render()
}
