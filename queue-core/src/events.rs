//! The queue's `tracing` events, one function per event, so the names and fields live in
//! one place (and in the table of the crate docs). Each carries the queue's label (see
//! [`Queue::with_label`](crate::Queue::with_label)), as the latches' events carry theirs.
//! Without the `tracing` feature each is an empty inline function.

#![cfg_attr(not(feature = "tracing"), allow(unused_variables))]

use crate::job_id::JobId;
use crate::outcome::Outcome;

/// A put accepted the job (`TRACE`).
#[inline(always)]
pub(crate) fn accepted(label: &'static str, id: JobId) {
    #[cfg(feature = "tracing")]
    tracing::trace!(target: "tally_queue", label, id = id.get(), "job accepted");
}

/// A get delivered the job, as its delivery number `attempt` (`TRACE`).
#[inline(always)]
pub(crate) fn delivered(label: &'static str, id: JobId, attempt: u32) {
    #[cfg(feature = "tracing")]
    tracing::trace!(target: "tally_queue", label, id = id.get(), attempt, "job delivered");
}

/// An abandoned delivery's job went back for delivery number `attempt` (`DEBUG`).
#[inline(always)]
pub(crate) fn redelivered(label: &'static str, id: JobId, attempt: u32) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, id = id.get(), attempt, "job redelivered");
}

/// An abandoned delivery's job became a dead letter after `attempts` deliveries (`WARN`).
#[inline(always)]
pub(crate) fn dead_lettered(label: &'static str, id: JobId, attempts: u32) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "tally_queue", label, id = id.get(), attempts, "job dead-lettered");
}

/// A delivery was resolved, or ended uncertain by the policy after `abandoned` (`DEBUG`).
#[inline(always)]
pub(crate) fn ended(label: &'static str, id: JobId, outcome: Outcome) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, id = id.get(), %outcome, "job ended");
}

/// A delivery was dropped unresolved (`WARN`).
#[inline(always)]
pub(crate) fn abandoned(label: &'static str, id: JobId, panicking: bool) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "tally_queue", label, id = id.get(), panicking, "job abandoned");
}

/// A delivery put its job back in the buffer (`DEBUG`).
#[inline(always)]
pub(crate) fn retried(label: &'static str, id: JobId) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, id = id.get(), "job retried");
}

/// An immediate shutdown drained the job and handed it back (`DEBUG`).
#[inline(always)]
pub(crate) fn discarded(label: &'static str, id: JobId) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, id = id.get(), "job discarded");
}

/// The first shutdown of the queue, either kind (`DEBUG`).
#[inline(always)]
pub(crate) fn shut_down(label: &'static str, unfinished: u64) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, unfinished, "queue shut down");
}

/// An immediate shutdown drained the buffer (`DEBUG`), after one `job discarded` per job.
#[inline(always)]
pub(crate) fn drained(label: &'static str, discarded: usize) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, discarded, "queue drained");
}

/// The last worker guard left; puts are refused until a new worker registers (`DEBUG`).
#[inline(always)]
pub(crate) fn last_worker_left(label: &'static str) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, "last worker left");
}

/// The last producer guard left; the queue shuts down (`DEBUG`).
#[inline(always)]
pub(crate) fn last_producer_left(label: &'static str) {
    #[cfg(feature = "tracing")]
    tracing::debug!(target: "tally_queue", label, "last producer left");
}
