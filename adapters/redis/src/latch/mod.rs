//! The tracking latch across processes (see [`TrackingLatch`]).

pub(crate) mod counter;
pub(crate) mod error;
pub(crate) mod event;
mod inner;
mod keys;
pub(crate) mod options;
mod scripts;
pub(crate) mod snapshot;
pub(crate) mod tracking;
