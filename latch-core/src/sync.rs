//! The atomics every latch uses: loom's under `cfg(loom)` so the models see them,
//! portable-atomic's on targets without compare-and-swap, core's otherwise.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU8, AtomicUsize};

#[cfg(all(not(loom), feature = "portable-atomic"))]
pub(crate) use portable_atomic::{AtomicU8, AtomicUsize};

#[cfg(all(not(loom), not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic::{AtomicU8, AtomicUsize};

pub(crate) use core::sync::atomic::Ordering;
