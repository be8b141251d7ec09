//! Key names of one queue.

use alloc::format;
use alloc::string::String;

/// Every key of one queue, all under the hash tag `{name}`.
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    pub(crate) tag: String,
    /// stream, meta, ledger, workers, ends, dead, uncertain: the order of KEYS[1..=7].
    pub(crate) fixed: [String; 7],
}

impl Keys {
    pub(crate) fn new(name: &str) -> Self {
        let tag = format!("{{{name}}}");
        let fixed = [
            "s",
            "meta",
            "ledger",
            "workers",
            "ends",
            "dead",
            "uncertain",
        ]
        .map(|suffix| format!("{tag}:{suffix}"));
        Keys { tag, fixed }
    }

    pub(crate) fn stream(&self) -> &str {
        &self.fixed[0]
    }

    pub(crate) fn ends(&self) -> &str {
        &self.fixed[4]
    }

    pub(crate) fn dead(&self) -> &str {
        &self.fixed[5]
    }

    pub(crate) fn uncertain(&self) -> &str {
        &self.fixed[6]
    }

    /// The key remembering how an entry was resolved, for idempotent repeats.
    pub(crate) fn resolved(&self, entry: &str) -> String {
        format!("{}:r:{entry}", self.tag)
    }

    /// The list a `shutdown_now` caller's drained items wait in until it confirms them.
    pub(crate) fn drained(&self, consumer: &str) -> String {
        format!("{}:drained:{consumer}", self.tag)
    }

    /// The key of a put's idempotency key.
    pub(crate) fn idempotency(&self, key: &str) -> String {
        format!("{}:k:{key}", self.tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag() {
        let keys = Keys::new("jobs");
        assert_eq!(keys.stream(), "{jobs}:s");
        assert!(keys.fixed.iter().all(|key| key.starts_with("{jobs}:")));
        assert_eq!(keys.resolved("1-0"), "{jobs}:r:1-0");
        assert_eq!(keys.idempotency("k"), "{jobs}:k:k");
    }
}
