//! Cross-crate scenarios for `latch-core` and `queue-core`: the tests under `tests/` and
//! the cross-runtime demo (`cargo run -p integration-tests --example cross_runtime`).
//! Nothing here is published.
