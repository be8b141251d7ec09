//! The names of the figures the `metrics` feature records, table in the crate docs. They
//! are built with or without the feature, so that other crates (`tally-redis`) can record
//! under the same names without turning the feature on here, and dashboards can refer to
//! them. Every figure carries the label `queue` (the queue's label); the ended count also
//! carries `outcome`.
//!
//! # Examples
//!
//! ```
//! use tally_queue::metric_names;
//!
//! assert_eq!(metric_names::ACCEPTED, "tally_queue_accepted_total");
//! assert!(metric_names::ALL.iter().all(|name| name.starts_with("tally_queue_")));
//! ```

/// Jobs accepted (counter).
pub const ACCEPTED: &str = "tally_queue_accepted_total";
/// Jobs ended, by `outcome`: `succeeded`, `rejected`, `uncertain`, `abandoned` or
/// `discarded` (counter).
pub const ENDED: &str = "tally_queue_ended_total";
/// Jobs buffered: fresh, returned, or held until due (gauge).
pub const BUFFERED: &str = "tally_queue_buffered";
/// Jobs in flight (gauge).
pub const IN_FLIGHT: &str = "tally_queue_in_flight";
/// Redeliveries of abandoned jobs (counter).
pub const REDELIVERED: &str = "tally_queue_redelivered_total";
/// Dead letters kept, not yet taken (gauge).
pub const DEAD_LETTERS: &str = "tally_queue_dead_letters";
/// Seconds from becoming buffered (accepted, returned or held) to being taken (histogram).
pub const BUFFERED_SECONDS: &str = "tally_queue_buffered_seconds";
/// Seconds from a delivery to its end: resolved, retried or dropped (histogram).
pub const IN_FLIGHT_SECONDS: &str = "tally_queue_in_flight_seconds";

/// Every name above.
pub const ALL: [&str; 8] = [
    ACCEPTED,
    ENDED,
    BUFFERED,
    IN_FLIGHT,
    REDELIVERED,
    DEAD_LETTERS,
    BUFFERED_SECONDS,
    IN_FLIGHT_SECONDS,
];
