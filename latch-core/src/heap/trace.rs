//! The `tracing` events every latch emits under the `tracing` feature, written once.
//!
//! | event (target `tally_latch`) | level | fields |
//! |---|---|---|
//! | `latch count-down` | `DEBUG` | `label`, `remaining`; tracking: `counter`, `elapsed_us` |
//! | `latch opened` | `INFO` | `label`; tracking: `counter`, `time_to_open_us` |
//! | `latch failed` | `WARN` | `label`, `reason`, `error_type`; tracking: `counter` |
//!
//! `reason` is `failed` (a `fail` call), `counter failed` (a counter's `fail`),
//! `abandoned` (a counter dropped without reporting) or `panicked` (dropped while its thread
//! panicked). The error value itself is not formatted, since the latches put no `Display`
//! or `Debug` bound on `E`; `error_type` names its type.

/// A count-down of a count-down or failable latch.
pub(crate) fn count_down(label: &'static str, remaining: usize) {
    tracing::debug!(target: "tally_latch", label, remaining, "latch count-down");
    if remaining == 0 {
        tracing::info!(target: "tally_latch", label, "latch opened");
    }
}

/// A failure that was accepted (the first one).
pub(crate) fn failed(
    label: &'static str,
    reason: &'static str,
    counter: Option<&str>,
    error_type: &'static str,
) {
    tracing::warn!(
        target: "tally_latch",
        label,
        reason,
        counter,
        error_type,
        "latch failed"
    );
}
