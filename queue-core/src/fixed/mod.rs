//! The no-heap tier.
