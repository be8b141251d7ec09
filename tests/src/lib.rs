//! Cross-crate scenarios for `latch-core` and `queue-core`: the tour (`cargo run --example
//! tour`) and the tests under `tests/`. Nothing here is published.
