//! The atomics the crate is built on, in one place.
//!
//! - under `cfg(loom)`: loom's model-checked atomics;
//! - with the `portable-atomic` feature: `portable_atomic`'s, for targets without
//!   compare-and-swap (thumbv6m), where they use `critical-section`;
//! - otherwise: `core::sync::atomic`, except `AtomicU64` on targets without native 64-bit
//!   atomics (thumbv7em), which comes from `portable_atomic`'s fallback (a critical section
//!   with the `critical-section` feature, a small lock table without it).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

#[cfg(all(not(loom), feature = "portable-atomic"))]
pub(crate) use portable_atomic::{AtomicU64, AtomicUsize, Ordering};

#[cfg(all(not(loom), not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic::{AtomicUsize, Ordering};

#[cfg(all(not(loom), not(feature = "portable-atomic"), target_has_atomic = "64"))]
pub(crate) use core::sync::atomic::AtomicU64;

#[cfg(all(
    not(loom),
    not(feature = "portable-atomic"),
    not(target_has_atomic = "64")
))]
pub(crate) use portable_atomic::AtomicU64;
