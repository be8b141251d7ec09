//! One job in flight, as [`Queue::in_flight`](crate::Queue::in_flight) lists it.

use alloc::string::String;
use core::time::Duration;

use tally_queue::JobId;

/// A job in flight: who holds it, at which attempt, and since when.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
/// let lease = queue.options().get_lease();
/// for job in queue.in_flight().await.unwrap() {
///     let id = job.id.map_or("foreign".to_string(), |id| id.to_string());
///     let expired = if job.lease_age > lease { ", lease expired" } else { "" };
///     let alive = if job.holder_alive { "alive" } else { "not seen for a lease" };
///     println!("{id} attempt {} held by {} ({alive}){expired}", job.attempt, job.holder);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InFlight {
    /// The job's id; `None` for an entry something else wrote to the stream (the get that
    /// took it dead-letters it).
    pub id: Option<JobId>,
    /// Which delivery of the job this is (1 at first).
    pub attempt: u64,
    /// The holder: the consumer name of the handle that took it
    /// ([`Queue::consumer`](crate::Queue::consumer)), or `<consumer>/drain` for an item a
    /// `shutdown_now` of that handle is moving out.
    pub holder: String,
    /// Time since the holder took it or last renewed its lease
    /// ([`Delivery::keep_alive`](crate::Delivery::keep_alive)), by the server's clock: past
    /// the lease, the lease has expired and the job is reclaimed by the next look.
    pub lease_age: Duration,
    /// Whether the holder's handle was seen within one lease: it looked at the server's
    /// clock (every maintenance pass and every get that reclaims does), or has a
    /// [`Worker`](crate::Worker) whose heartbeat has not expired. A handle that runs
    /// [`maintain`](crate::Queue::maintain) is seen every third of a lease; a dead process
    /// stops being seen one lease after its last look.
    pub holder_alive: bool,
    /// The entry's id in the stream.
    pub entry: String,
}
