//! The faces: each public verb family of [`Queue`](crate::Queue), as an `impl Queue` block
//! with its named future, one family per file. A face only calls down, into the fate
//! layer (`fate/`) or the raw queue's observers and waiter classes (`engine/`).
//!
//! - `put.rs`: `put`, `try_put`, `put_blocking`, ... and [`Put`](put::Put);
//! - `batch.rs`: `put_many`, `get_many` and their forms, [`PutMany`](batch::PutMany),
//!   [`GetMany`](batch::GetMany), [`GetManyOwned`](batch::GetManyOwned);
//! - `get.rs`: `get`, `try_get`, `get_owned`, ... and [`Get`](get::Get),
//!   [`GetOwned`](get::GetOwned);
//! - `join.rs`: `join`, ... and [`Join`](join::Join);
//! - `stream.rs`: `deliveries` and the [`Deliveries`](stream::Deliveries) streams;
//! - `shutdown.rs`: `shutdown`, `shutdown_now`, `abort`, `cancel_in_flight`;
//! - `shutdown_until.rs`: the drain-or-abort policy [`ShutdownUntil`](shutdown_until::ShutdownUntil);
//! - `dead_letters.rs`: `take_dead_letters` and the redelivery count;
//! - `metrics.rs` (the `metrics` feature): `record_metrics`;
//! - `redelivery.rs`: `with_redelivery_delay`, redeliveries that wait for a schedule;
//! - `retry_at.rs`: `retry_at` on deliveries (a retry after a deadline) and
//!   [`RetryAt`](retry_at::RetryAt), [`RetryAtOwned`](retry_at::RetryAtOwned).

pub(crate) mod batch;
pub(crate) mod dead_letters;
pub(crate) mod get;
pub(crate) mod join;
#[cfg(feature = "metrics")]
pub(crate) mod metrics;
pub(crate) mod put;
#[cfg(target_has_atomic = "ptr")]
pub(crate) mod redelivery;
pub(crate) mod retry_at;
pub(crate) mod shutdown;
pub(crate) mod shutdown_until;
pub(crate) mod stream;
