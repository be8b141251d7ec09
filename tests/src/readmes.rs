//! The examples of the cores' READMEs, run as doctests. Those READMEs are what crates.io
//! shows; the crates' own docs are written in their `lib.rs` and do not include them, so
//! without this their examples would never run.

#[doc = include_str!("../../latch-core/README.md")]
struct LatchReadme;

#[doc = include_str!("../../queue-core/README.md")]
struct QueueReadme;
