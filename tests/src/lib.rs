//! Cross-crate scenarios for `latch-core` and `queue-core`: the tests under `tests/` and
//! the cross-runtime demo (`cargo run -p integration-tests --example cross_runtime`).
//! Nothing here is published.
//!
//! The library holds what the tests share across crates: [`external`], the rule for tests
//! that need a program from outside (skipped loudly outside CI, failing under CI).

pub mod external;
