//! What both tiers share: the atomics, and `const_fn!` for constructors that are `const`
//! except under loom.
//!
//! `atomic` is loom's under `cfg(loom)`, so the models see every atomic operation;
//! portable-atomic's with the `portable-atomic` feature, for targets without compare-and-swap;
//! core's otherwise. It is re-exported as a module, so a tier imports only what it uses.

#[cfg(loom)]
pub(crate) use loom::sync::atomic;

#[cfg(all(not(loom), feature = "portable-atomic"))]
pub(crate) use portable_atomic as atomic;

#[cfg(all(not(loom), not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic;

/// Declares a `const fn`, except under `cfg(loom)`, whose atomics are not `const`.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        #[cfg(not(loom))]
        $(#[$attr])*
        $vis const fn $name($($arg: $ty),*) -> $ret $body

        #[cfg(loom)]
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_fn;
