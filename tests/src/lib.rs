//! Cross-crate scenarios for `tally-latch` and `tally-queue`: the tests under `tests/` and
//! the cross-runtime demo (`cargo run -p integration-tests --example cross_runtime`).
//! Nothing here is published.
//!
//! The library holds what the tests share across crates: [`external`], the rule for tests
//! that need a program from outside (skipped loudly outside CI, failing under CI). Its
//! doctests run the examples of the cores' READMEs (`readmes.rs`).

pub mod external;
#[cfg(doctest)]
mod readmes;
